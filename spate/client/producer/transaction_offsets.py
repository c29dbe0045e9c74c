"""Adding a consumer group's offsets to a transaction another process opened.

A two-phase writer hands its open transaction to another process as
``(transactional id, producer id, producer epoch)`` (see
:mod:`spate.client.producer.transaction_completion`). That process can put a
consumer group's offsets into the transaction before ending it, so the
group's position moves exactly when the transaction's records become
visible (read-process-write exactly-once)::

    FindCoordinator(key=transactional id, key_type=1)             → transaction coordinator
    AddOffsetsToTxn(transactional id, producer id, epoch, group)  → the group's offsets partition
                                                                    joins the transaction
    FindCoordinator(key=group, key_type=0)                        → group coordinator
    TxnOffsetCommit(transactional id, group, producer id, epoch,
                    {topic: {partition: offset}})                 → offsets held pending: visible to
                                                                    the group when the transaction
                                                                    commits, dropped if it aborts

The requests and the reading of their answers are the transactional
producer's own (:mod:`spate.client.producer.txn_requests`), run here over one
blocking connection set. Retried until the deadline:
COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, NOT_COORDINATOR /
COORDINATOR_NOT_AVAILABLE (the coordinator is looked up again) and lost
connections. Any other refusal raises :class:`TransactionOffsetsError`:
PRODUCER_FENCED (another producer took the transactional id over, or the
coordinator aborted the transaction when its timeout passed),
INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING, GROUP_AUTHORIZATION_FAILED, ...

A crash between the two requests leaves the group's offsets partition in
the transaction with no offsets: committing it then moves nothing.
Repeating the whole call is harmless; the last offsets sent win.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from spate.client.commit_offsets import offsets_to_commit
from spate.client.errors import (
    BrokerUnavailableError,
    ClientError,
    KafkaError,
    KafkaTimeoutError,
    TransactionAbortableError,
)
from spate.client.net.find_coordinator import CoordinatorKey
from spate.client.producer.coordinator_client import CoordinatorClient
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.transaction_completion import DEFAULT_TIMEOUT_MS
from spate.client.producer.txn_requests import (
    CONCURRENT_TRANSACTIONS_BACKOFF,
    AddOffsetsToTxn,
    FindCoordinator,
    Outcome,
    TxnRequest,
)
from spate.protocol import ErrorCode
from spate.structs import OffsetAndMetadata, TopicPartition

__all__ = [
    "TransactionOffsetsError",
    "TransactionOffsetsWriter",
    "add_offsets_to_open_transaction",
]


class TransactionOffsetsError(KafkaError):
    """A coordinator refused the group's offsets for the transaction; ``code`` says why.

    The transaction cannot carry the offsets: abort it (or let its timeout
    abort it). The coordinator's refusal is the exception's ``__cause__``.
    """

    def __init__(self, transaction: OpenTransaction, group_id: str, cause: KafkaError) -> None:
        self.transaction = transaction
        self.group_id = group_id
        super().__init__(
            cause.code,
            f"offsets of group {group_id!r} cannot join the transaction of {transaction.transactional_id!r} "
            f"(producer {transaction.producer_id}, epoch {transaction.producer_epoch}): {cause}",
        )

    @property
    def retriable(self) -> bool:
        return False


@dataclass
class _HandedOverTransaction:
    """One ``add_offsets`` call: a transaction opened elsewhere, the group, the deadline, the coordinators found.

    It is the :class:`~spate.client.producer.txn_requests.TransactionState`
    the request handlers read the identity from; what they report needs no
    bookkeeping here, since failures reach the caller through the request's
    result.
    """

    transaction: OpenTransaction
    group_id: str
    deadline: float
    coordinators: dict[CoordinatorKey, tuple[int, str, int]] = field(default_factory=dict)

    @property
    def transactional_id(self) -> str:
        return self.transaction.transactional_id

    @property
    def producer_id(self) -> int:
        return self.transaction.producer_id

    @property
    def producer_epoch(self) -> int:
        return self.transaction.producer_epoch

    def offsets_added(self) -> None:
        pass

    def fatal(self, error: BaseException) -> None:
        pass

    def abortable(self, error: BaseException) -> None:
        pass


class TransactionOffsetsWriter(CoordinatorClient):
    """Adds group offsets to other producers' open transactions over one set of connections."""

    default_client_id = "spate-txn-offsets"

    def add_offsets(
        self,
        transaction: OpenTransaction,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        timeout_ms: float = DEFAULT_TIMEOUT_MS,
    ) -> None:
        """Put ``offsets`` (next offsets to consume) of ``group_id`` into ``transaction``.

        Returns once both coordinators accepted; the group sees the offsets
        when the transaction commits. Raises TransactionOffsetsError when a
        coordinator refuses, KafkaTimeoutError when ``timeout_ms`` passes first.
        """
        if not group_id:
            raise ValueError("adding offsets to a transaction needs a group id")
        committed = offsets_to_commit(offsets, f" to group {group_id!r}")
        if not committed:
            return
        call = _HandedOverTransaction(transaction, group_id, self._clock() + timeout_ms / 1000)
        add = AddOffsetsToTxn(Future(), CoordinatorKey.transaction(transaction.transactional_id), group_id, committed)
        self._run(add, call)
        if add.follow_up is None:  # AddOffsetsToTxn succeeded, so its handler made the commit
            raise RuntimeError("AddOffsetsToTxn was accepted but no TxnOffsetCommit followed")
        self._run(add.follow_up, call)

    # --- running one request to completion ---------------------------------------------------------

    def _run(self, request: TxnRequest, call: _HandedOverTransaction) -> None:
        """Send ``request`` until its handler is done with it (its own retry rules: see ``txn_requests``)."""
        last_problem = "no answer yet"
        while True:
            node = self._node_for(request, call)
            try:
                if node is None:
                    raise BrokerUnavailableError("no broker can be reached")
                _, body = self._network.request(
                    node, request.api_key, request.body(call), deadline=call.deadline, min_version=request.min_version
                )
            except (ClientError, KafkaError) as exc:
                last_problem = str(exc)
                outcome = request.on_transport_error(call, exc)
            else:
                last_problem = _describe_answer(body)
                outcome = request.on_response(call, body)
            request.attempts += 1
            if outcome is Outcome.DONE:
                break
            if outcome is Outcome.FIND_COORDINATOR and request.coordinator is not None:
                call.coordinators.pop(request.coordinator, None)
                self._network.metadata.request_update()
            pause = (
                CONCURRENT_TRANSACTIONS_BACKOFF
                if outcome is Outcome.RETRY_SOON
                else self._network.backoff.delay(request.attempts - 1)
            )
            if self._clock() + pause >= call.deadline:
                raise KafkaTimeoutError(
                    f"{request.api_key.name} for group {call.group_id!r} in the transaction of "
                    f"{call.transactional_id!r} did not complete before its timeout: last answer: {last_problem}"
                )
            self._sleep(pause)
        # An accepted AddOffsetsToTxn leaves its result to the TxnOffsetCommit it queued: not done yet.
        error = request.result.exception() if request.result.done() else None
        if error is not None:
            raise _refusal(error, call.transaction, call.group_id)

    def _node_for(self, request: TxnRequest, call: _HandedOverTransaction) -> int | None:
        """The node to send ``request`` to, looking its coordinator up first if needed; None: none reachable."""
        key = request.coordinator
        if key is None:
            return self._network.least_loaded_node(self._clock())
        if key not in call.coordinators:
            finder = FindCoordinator(key)
            self._run(finder, call)
            if finder.address is None:  # _run returns only after a lookup that succeeded
                raise RuntimeError(f"FindCoordinator for the {key} succeeded without an address")
            call.coordinators[key] = finder.address
        node_id, host, port = call.coordinators[key]
        if self._network.node(node_id) is None:
            self._network.register_node(node_id, host, port)
        return node_id


def add_offsets_to_open_transaction(
    bootstrap_servers: str | Sequence[str],
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    group_id: str,
    offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> None:
    """:meth:`TransactionOffsetsWriter.add_offsets` over a client made for the call."""
    with TransactionOffsetsWriter(bootstrap_servers) as writer:
        writer.add_offsets(
            OpenTransaction(transactional_id, producer_id, producer_epoch), group_id, offsets, timeout_ms=timeout_ms
        )


# --- helpers --------------------------------------------------------------------------------------


def _describe_answer(body: Any) -> str:
    """The error codes in a coordinator's answer, for a timeout's message."""
    codes: list[int] = []
    if hasattr(body, "error_code"):
        codes.append(body.error_code)
    for topic in getattr(body, "topics", None) or []:
        codes.extend(part.error_code for part in topic.partitions)
    names = sorted({ErrorCode.of(code).name for code in codes})
    return ", ".join(names) or "no error code"


def _refusal(error: BaseException, transaction: OpenTransaction, group_id: str) -> BaseException:
    """The error to raise for a request that failed for good."""
    cause = error.__cause__ if isinstance(error, TransactionAbortableError) and error.__cause__ else error
    if isinstance(cause, KafkaError):
        refused = TransactionOffsetsError(transaction, group_id, cause)
        refused.__cause__ = cause
        return refused
    return cause  # a failure on this side of the wire (e.g. a broker without the API)
