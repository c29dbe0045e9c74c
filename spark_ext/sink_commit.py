"""The driver's half of the exactly-once protocol: end the transactions the tasks left open.

``commit`` runs once every task of a micro-batch (or batch job) succeeded:
it commits each open transaction named in the tasks' messages, up to
``commitParallelism`` at a time (:mod:`spark_ext.sink_parallel_commit`), and
returns only once every one is decided. If one
cannot be committed (most often: it outlived ``transaction.timeout.ms`` and
the coordinator aborted it), ``commit`` raises after trying all the others,
so Spark fails the batch instead of recording it as done; a restarted query
replays it and the tasks whose transactions did commit write nothing.

``abort`` runs when a task failed: it aborts every open transaction it was
told about and logs, rather than raises, what it could not abort (those
transactions are aborted by the next attempt's fencing or by their timeout).

With ``sourceGroupId`` (:class:`SourceOffsets`) the batch's source offsets
ride in the first open transaction: AddOffsetsToTxn + TxnOffsetCommit
before any EndTxn. That transaction is committed last, and only once every
other one committed (else it is aborted), so the source group moves only
when the whole batch is visible. A batch that left no transaction open
(no rows, or every task found it committed) commits the offsets in a
transaction of their own, ``<sinkId>-offsets``, so the group's lag still
drops. A replayed batch commits the same offsets again, which is harmless.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

from spark_ext.checkpoint_offsets import CheckpointOffsetsError, read_batch_offsets
from spark_ext.client_pool import ClientPool
from spark_ext.sink_parallel_commit import DEFAULT_COMMIT_PARALLELISM, ParallelTransactionCompleter
from spark_ext.sink_task import SinkCommitMessage
from spate.client import (
    ClientError,
    KafkaError,
    OffsetAndMetadata,
    OpenTransaction,
    Producer,
    TopicPartition,
    TransactionCompleter,
    TransactionCompletionError,
    TransactionOffsetsWriter,
)

logger = logging.getLogger(__name__)

CompleterFactory = Callable[[str], TransactionCompleter]
OffsetsWriterFactory = Callable[[str], TransactionOffsetsWriter]
# Makes the transactional producer (from its transactional id) that commits offsets when no task left a transaction.
OffsetsProducerFactory = Callable[[str], Producer]


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


@dataclass(frozen=True)
class SourceOffsets:
    """A micro-batch's source offsets, to be committed to the source's group together with the batch.

    ``transactional_id`` names the transaction of their own the offsets use
    when the batch left no transaction open.
    """

    group_id: str
    offsets: Mapping[TopicPartition, OffsetAndMetadata]
    transactional_id: str


def batch_source_offsets(group_id: str, checkpoint_dir: str, batch_id: int, sink_id: str) -> SourceOffsets:
    """Micro-batch ``batch_id``'s spate source offsets from the checkpoint; raises SinkCommitError."""
    try:
        offsets = read_batch_offsets(Path(checkpoint_dir), batch_id)
    except CheckpointOffsetsError as exc:
        raise SinkCommitError(
            f"micro-batch {batch_id}: the source offsets for sourceGroupId {group_id!r} cannot be read: {exc}"
        ) from exc
    metadata = f"spate sink {sink_id}: micro-batch {batch_id}"
    return SourceOffsets(
        group_id=group_id,
        offsets={tp: OffsetAndMetadata(offset, metadata) for tp, offset in offsets.items()},
        transactional_id=f"{sink_id}-offsets",
    )


def commit_transactions(
    bootstrap_servers: str,
    messages: Sequence[Optional[object]],
    *,
    batch_id: int | None,
    timeout_ms: float,
    completer_factory: CompleterFactory = TransactionCompleter,
    source_offsets: SourceOffsets | None = None,
    offsets_writer_factory: OffsetsWriterFactory = TransactionOffsetsWriter,
    offsets_producer_factory: OffsetsProducerFactory | None = None,
    parallelism: int = DEFAULT_COMMIT_PARALLELISM,
    pool: ClientPool | None = None,
) -> int:
    """Commit every open transaction of the batch, with ``source_offsets`` if given; returns how many.

    Raises SinkCommitError. ``offsets_producer_factory`` is needed when
    ``source_offsets`` is given and the batch may leave no transaction open.
    ``parallelism``: how many EndTxn requests are in flight at a time;
    ``pool``: where the completers' connections are kept between batches.
    """
    transactions = open_transactions(messages)
    if source_offsets is not None and source_offsets.offsets:
        if not transactions:
            if offsets_producer_factory is None:
                raise ValueError("committing source offsets without a task transaction needs a producer factory")
            commit_offsets_alone(offsets_producer_factory, source_offsets, batch_id=batch_id, timeout_ms=timeout_ms)
            return 0
        _commit_with_offsets(
            bootstrap_servers, transactions, source_offsets, batch_id=batch_id, timeout_ms=timeout_ms,
            completer_factory=completer_factory, offsets_writer_factory=offsets_writer_factory,
            parallelism=parallelism, pool=pool,
        )
        return len(transactions)
    if not transactions:
        return 0
    completers = ParallelTransactionCompleter(
        bootstrap_servers, parallelism=parallelism, completer_factory=completer_factory, pool=pool
    )
    try:
        completers.complete_all(transactions, commit=True, timeout_ms=timeout_ms)
    except (ClientError, KafkaError) as exc:
        raise _commit_failed(exc, batch_id, len(transactions)) from exc
    return len(transactions)


def _commit_failed(exc: BaseException, batch_id: int | None, total: int) -> SinkCommitError:
    if isinstance(exc, TransactionCompletionError):
        names = ", ".join(txn.transactional_id for txn, _ in exc.failures)
        return SinkCommitError(
            f"{describe_batch(batch_id)}: {len(exc.failures)} of {total} transaction(s) could not "
            f"be committed ({names}): {exc}. If they were aborted because they were open longer than "
            f"transaction.timeout.ms, raise it above the longest batch time; restarting the query replays "
            f"the batch without duplicating what was committed"
        )
    return SinkCommitError(f"{describe_batch(batch_id)}: committing its transactions failed: {exc}")


def _commit_with_offsets(
    bootstrap_servers: str,
    transactions: Sequence[OpenTransaction],
    source: SourceOffsets,
    *,
    batch_id: int | None,
    timeout_ms: float,
    completer_factory: CompleterFactory,
    offsets_writer_factory: OffsetsWriterFactory,
    parallelism: int,
    pool: ClientPool | None,
) -> None:
    """Add the offsets to the first transaction; commit the others, then it (or abort it if one failed)."""
    carrier, others = transactions[0], list(transactions[1:])
    try:
        with offsets_writer_factory(bootstrap_servers) as writer:
            writer.add_offsets(carrier, source.group_id, source.offsets, timeout_ms=timeout_ms)
    except (ClientError, KafkaError) as exc:
        # Nothing is committed: Spark's abort (or the replay's fencing) ends every transaction of the batch.
        raise SinkCommitError(
            f"{describe_batch(batch_id)}: the source offsets of group {source.group_id!r} could not join the "
            f"transaction of {carrier.transactional_id!r}: {exc}; restarting the query replays the batch"
        ) from exc
    completers = ParallelTransactionCompleter(
        bootstrap_servers, parallelism=parallelism, completer_factory=completer_factory, pool=pool
    )
    with completer_factory(bootstrap_servers) as completer:
        try:
            completers.complete_all(others, commit=True, timeout_ms=timeout_ms)
        except (ClientError, KafkaError) as exc:
            _abort_quietly(completer, carrier, batch_id, timeout_ms)
            raise _commit_failed(exc, batch_id, len(transactions)) from exc
        try:
            completer.complete(carrier, commit=True, timeout_ms=timeout_ms)
        except (ClientError, KafkaError) as exc:
            raise _commit_failed(exc, batch_id, len(transactions)) from exc


def _abort_quietly(
    completer: TransactionCompleter, txn: OpenTransaction, batch_id: int | None, timeout_ms: float
) -> None:
    try:
        completer.complete(txn, commit=False, timeout_ms=timeout_ms)
    except (ClientError, KafkaError) as exc:
        logger.warning("%s: the transaction carrying the source offsets (%s) was not aborted (its timeout aborts "
                       "it): %s", describe_batch(batch_id), txn.transactional_id, exc)


def commit_offsets_alone(
    producer_factory: OffsetsProducerFactory,
    source: SourceOffsets,
    *,
    batch_id: int | None,
    timeout_ms: float,
) -> None:
    """Commit the source offsets in a transaction of their own (``source.transactional_id``)."""
    producer = producer_factory(source.transactional_id)
    try:
        producer.init_transactions(timeout_ms)
        producer.begin_transaction()
        producer.send_offsets_to_transaction(source.offsets, source.group_id, timeout_ms)
        producer.commit_transaction(timeout_ms)
    except (ClientError, KafkaError) as exc:
        raise SinkCommitError(
            f"{describe_batch(batch_id)}: committing the source offsets of group {source.group_id!r} in "
            f"transaction {source.transactional_id!r} failed: {exc}"
        ) from exc
    finally:
        producer.close(timeout_ms / 1000)  # aborts the transaction if it is still open


def abort_transactions(
    bootstrap_servers: str,
    messages: Sequence[Optional[object]],
    *,
    batch_id: int | None,
    timeout_ms: float,
    completer_factory: CompleterFactory = TransactionCompleter,
    parallelism: int = DEFAULT_COMMIT_PARALLELISM,
    pool: ClientPool | None = None,
) -> int:
    """Abort every open transaction named by the messages; failures are logged. Returns how many were named."""
    transactions = open_transactions(messages)
    if not transactions:
        return 0
    completers = ParallelTransactionCompleter(
        bootstrap_servers, parallelism=parallelism, completer_factory=completer_factory, pool=pool
    )
    try:
        completers.complete_all(transactions, commit=False, timeout_ms=timeout_ms)
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
