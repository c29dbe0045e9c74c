"""Ending a transaction from a process other than the producer that opened it.

A transactional producer normally ends its own transaction with
``commit_transaction``. A two-phase writer (a Spark sink whose tasks write
inside transactions that the driver commits once every task succeeded)
instead hands ``(transactional id, producer id, producer epoch)`` to another
process, which sends the EndTxn itself::

    FindCoordinator(key=transactional id, key_type=1)  → coordinator node
    EndTxn(transactional id, producer id, epoch, committed=True|False) → error code

Retried until the deadline: COORDINATOR_NOT_AVAILABLE,
COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR (the coordinator is looked
up again), CONCURRENT_TRANSACTIONS (the coordinator is still writing the
markers of this or of the previous transaction) and lost connections. An
EndTxn repeated after the first one reached the coordinator is answered
NONE once the transaction is complete, so a retried commit that answers
NONE is done.

The producer side of the hand-over is ``Producer.prepare_handoff`` (wait
for every record of the transaction, return its id and epoch) and
``Producer.close(abort_open_transaction=False)``; :func:`hand_off_transaction`
does both.

Any other answer is final and raised as :class:`TransactionCompletionError`:
PRODUCER_FENCED (a newer producer took the transactional id over, or the
coordinator aborted the transaction when its timeout passed, bumping the
epoch), INVALID_PRODUCER_ID_MAPPING (the id is unknown, e.g. expired) and
INVALID_TXN_STATE (the transaction already ended the other way).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterable, Sequence

from spate.client.errors import ClientError, KafkaError, KafkaTimeoutError
from spate.client.net.find_coordinator import CoordinatorKey, find_coordinator
from spate.client.producer.coordinator_client import CoordinatorClient
from spate.client.producer.open_transaction import OpenTransaction
from spate.protocol import ApiKey, ErrorCode
from spate.protocol.messages.end_txn import EndTxnRequest

if TYPE_CHECKING:
    from spate.client.producer.producer import Producer

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 60_000


class TransactionCompletionError(KafkaError):
    """The coordinator refused to end a transaction; ``transaction`` says which.

    ``failures`` lists every refused transaction when several were ended in
    one call; the exception's own code is that of the first.
    """

    def __init__(self, commit: bool, failures: Sequence[tuple[OpenTransaction, KafkaError]]) -> None:
        if not failures:
            raise ValueError("a TransactionCompletionError needs at least one failure")
        self.commit = commit
        self.failures = list(failures)
        self.transaction = failures[0][0]
        verb = "commit" if commit else "abort"
        detail = "; ".join(
            f"{txn.transactional_id} (producer {txn.producer_id}, epoch {txn.producer_epoch}): {error}"
            for txn, error in failures
        )
        super().__init__(failures[0][1].code, f"could not {verb} {len(failures)} transaction(s): {detail}")


class TransactionCompleter(CoordinatorClient):
    """Ends transactions of other producers over one set of connections."""

    default_client_id = "spate-txn-completer"

    def complete(self, transaction: OpenTransaction, *, commit: bool, timeout_ms: float = DEFAULT_TIMEOUT_MS) -> None:
        """Commit (or abort) one transaction; raises TransactionCompletionError or KafkaTimeoutError."""
        deadline = self._clock() + timeout_ms / 1000
        try:
            self._complete_one(transaction, commit, deadline)
        except KafkaError as exc:
            if isinstance(exc, TransactionCompletionError):
                raise
            raise TransactionCompletionError(commit, [(transaction, exc)]) from exc

    def complete_all(
        self, transactions: Iterable[OpenTransaction], *, commit: bool, timeout_ms: float = DEFAULT_TIMEOUT_MS
    ) -> None:
        """End every transaction, each attempted even when another fails; then report the failures.

        Raises TransactionCompletionError listing the refused ones, or the
        first KafkaTimeoutError / ClientError if one could not be decided in time.
        """
        deadline = self._clock() + timeout_ms / 1000
        refused: list[tuple[OpenTransaction, KafkaError]] = []
        undecided: list[BaseException] = []
        for txn in dict.fromkeys(transactions):
            try:
                self._complete_one(txn, commit, deadline)
            except KafkaError as exc:
                refused.append((txn, exc))
            except ClientError as exc:
                undecided.append(exc)
        if undecided:
            if refused:
                logger.error("%s", TransactionCompletionError(commit, refused))
            raise undecided[0]
        if refused:
            raise TransactionCompletionError(commit, refused)

    def _complete_one(self, txn: OpenTransaction, commit: bool, deadline: float) -> None:
        verb = "commit" if commit else "abort"

        def attempt(deadline: float) -> None:
            node = find_coordinator(self._network, CoordinatorKey.transaction(txn.transactional_id), deadline)
            body = EndTxnRequest(
                transactional_id=txn.transactional_id,
                producer_id=txn.producer_id,
                producer_epoch=txn.producer_epoch,
                committed=commit,
            )
            _, response = self._network.request(node, ApiKey.END_TXN, body, deadline=deadline)
            code = ErrorCode.of(response.error_code)
            if code == ErrorCode.NONE:
                return
            # The retriable codes (see the module docstring) are retriable KafkaErrors.
            raise KafkaError(code, f"{verb} the transaction of {txn.transactional_id!r}")

        self._retrier.call(f"{verb} of transactional id {txn.transactional_id!r}", attempt, deadline)


def hand_off_transaction(producer: Producer, *, timeout_ms: float = DEFAULT_TIMEOUT_MS) -> OpenTransaction:
    """Flush ``producer``, close it, and return its still-open transaction for another process to end.

    ``Producer.prepare_handoff`` followed by ``Producer.close``: everything
    sent in the transaction (records and offsets) is acknowledged before
    this returns; a record that failed raises instead (and the producer,
    still open, aborts the transaction when the caller closes it). The
    producer is closed without the abort a plain ``close()`` sends for an
    open transaction, so the transaction stays open until
    :func:`complete_transaction` ends it or the coordinator aborts it after
    ``transaction_timeout_ms``.
    """
    handed = producer.prepare_handoff(timeout_ms)
    producer.close(timeout_ms / 1000, abort_open_transaction=False)
    return handed


def complete_transaction(
    bootstrap_servers: str | Sequence[str],
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> None:
    """Commit (``commit=True``) or abort one open transaction of another producer.

    Raises TransactionCompletionError when the coordinator refuses (see the
    module docstring), KafkaTimeoutError when it cannot be reached or keeps
    answering retriable errors until ``timeout_ms`` passes.
    """
    with TransactionCompleter(bootstrap_servers) as completer:
        completer.complete(OpenTransaction(transactional_id, producer_id, producer_epoch), commit=commit,
                           timeout_ms=timeout_ms)


def complete_transactions(
    bootstrap_servers: str | Sequence[str],
    transactions: Iterable[OpenTransaction],
    commit: bool,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> None:
    """:meth:`TransactionCompleter.complete_all` over a client made for the call."""
    with TransactionCompleter(bootstrap_servers) as completer:
        completer.complete_all(transactions, commit=commit, timeout_ms=timeout_ms)


__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "KafkaTimeoutError",
    "OpenTransaction",
    "TransactionCompleter",
    "TransactionCompletionError",
    "complete_transaction",
    "complete_transactions",
    "hand_off_transaction",
]
