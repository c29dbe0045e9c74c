"""The driver's half of the exactly-once protocol: end the transactions the tasks left open.

``commit`` runs once every task of a micro-batch (or batch job) succeeded:
it commits each open transaction named in the tasks' messages. If one
cannot be committed (most often: it outlived ``transaction.timeout.ms`` and
the coordinator aborted it), ``commit`` raises after trying all the others,
so Spark fails the batch instead of recording it as done; a restarted query
replays it and the tasks whose transactions did commit write nothing.

``abort`` runs when a task failed: it aborts every open transaction it was
told about and logs, rather than raises, what it could not abort (those
transactions are aborted by the next attempt's fencing or by their timeout).
"""

from __future__ import annotations

import logging
from typing import Callable, Iterable, Optional, Sequence

from broker_core.client import KafkaError
from broker_core.client.errors import ClientError
from broker_core.client.transaction_completion import (
    OpenTransaction,
    TransactionCompleter,
    TransactionCompletionError,
)
from spark_ext.sink_task import SinkCommitMessage

logger = logging.getLogger(__name__)

CompleterFactory = Callable[[str], TransactionCompleter]


class SinkCommitError(RuntimeError):
    """The driver could not commit every transaction of a batch; the batch must be replayed."""


def open_transactions(messages: Sequence[Optional[object]]) -> list[OpenTransaction]:
    """The open transactions named by the tasks' commit messages (None: a task that failed)."""
    found: list[OpenTransaction] = []
    for message in messages:
        if isinstance(message, SinkCommitMessage) and message.transaction is not None:
            found.append(message.transaction)
    return found


def describe_batch(batch_id: int | None) -> str:
    return "the batch write" if batch_id is None else f"micro-batch {batch_id}"


def commit_transactions(
    bootstrap_servers: str,
    messages: Sequence[Optional[object]],
    *,
    batch_id: int | None,
    timeout_ms: float,
    completer_factory: CompleterFactory = TransactionCompleter,
) -> int:
    """Commit every open transaction of the batch; returns how many. Raises SinkCommitError."""
    transactions = open_transactions(messages)
    if not transactions:
        return 0
    with completer_factory(bootstrap_servers) as completer:
        try:
            completer.complete_all(transactions, commit=True, timeout_ms=timeout_ms)
        except TransactionCompletionError as exc:
            names = ", ".join(txn.transactional_id for txn, _ in exc.failures)
            raise SinkCommitError(
                f"{describe_batch(batch_id)}: {len(exc.failures)} of {len(transactions)} transaction(s) could not "
                f"be committed ({names}): {exc}. If they were aborted because they were open longer than "
                f"transaction.timeout.ms, raise it above the longest batch time; restarting the query replays "
                f"the batch without duplicating what was committed"
            ) from exc
        except (ClientError, KafkaError) as exc:
            raise SinkCommitError(f"{describe_batch(batch_id)}: committing its transactions failed: {exc}") from exc
    return len(transactions)


def abort_transactions(
    bootstrap_servers: str,
    messages: Sequence[Optional[object]],
    *,
    batch_id: int | None,
    timeout_ms: float,
    completer_factory: CompleterFactory = TransactionCompleter,
) -> int:
    """Abort every open transaction named by the messages; failures are logged. Returns how many were named."""
    transactions = open_transactions(messages)
    if not transactions:
        return 0
    try:
        with completer_factory(bootstrap_servers) as completer:
            completer.complete_all(transactions, commit=False, timeout_ms=timeout_ms)
    except (ClientError, KafkaError) as exc:
        logger.warning(
            "%s: some transactions were not aborted (the next attempt or their timeout aborts them): %s",
            describe_batch(batch_id), exc,
        )
    return len(transactions)


def summarize(messages: Iterable[Optional[object]]) -> tuple[int, int]:
    """(rows written, tasks that found their batch already committed)."""
    rows = skipped = 0
    for message in messages:
        if isinstance(message, SinkCommitMessage):
            rows += message.rows
            skipped += int(message.already_committed)
    return rows, skipped
