"""What one Spark task of the sink does with its rows, on an executor.

Exactly-once (one task = Spark partition ``p`` of micro-batch ``b``, sink id ``S``)::

    rows empty?                     → return "nothing written"; no transaction (a
                                      deterministic replay of this task is empty too)
    Producer(transactional_id=S-p).init_transactions()
                                    → fences every earlier attempt of S-p; its open
                                      transaction is aborted (or its commit finished)
    last = committed batch of group S-p (see sink_bookkeeping)
    last >= b, same query           → return "already committed"; nothing written
    begin_transaction; send every row; send_offsets_to_transaction({bookkeeping: b}, S-p)
    flush; every send must have succeeded
    return (S-p, producer id, epoch) → the driver commits it (sink_commit)
    close the producer WITHOUT ending the transaction

On any failure before the commit message is returned the task aborts its
transaction and raises, so Spark retries the task (the retry fences this
attempt anyway). A task killed outright leaves its transaction open; the
next attempt's ``init_transactions`` or the transaction timeout aborts it.

At-least-once: a plain idempotent producer sends every row and flushes; the
message only reports the row count.

Clients come from the executor's :mod:`spark_ext.client_pool`: the
at-least-once producer and the Admin client that reads the bookkeeping are
borrowed and handed back for the next task (one task at a time; a task that
fails closes the client it borrowed). The transactional producer is made
for the task and closed by it: its id is the task's, and every attempt must
fence the previous one.
"""

from __future__ import annotations

import itertools
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from pyspark.sql.datasource import WriterCommitMessage

from spark_ext.client_pool import ClientPool, PoolKey, shared_pool
from spark_ext.sink_bookkeeping import BatchBookkeeping
from spark_ext.sink_options import SinkOptions
from spark_ext.sink_records import OutgoingRecord
from spate.client import Admin, OpenTransaction, Producer, hand_off_transaction

logger = logging.getLogger(__name__)

ProducerFactory = Callable[..., Producer]
AdminFactory = Callable[..., Admin]


class SinkWriteError(RuntimeError):
    """A task could not write its rows; the task fails and Spark retries it."""


@dataclass(frozen=True)
class TaskInfo:
    """Where a task runs: Spark partition id, attempt number, micro-batch and query (None in batch writes)."""

    partition: int
    attempt: int = 0
    batch_id: int | None = None
    query_id: str | None = None


def spark_task_info() -> TaskInfo:
    """The running Spark task, from ``TaskContext``.

    Spark sets the local properties ``streaming.sql.batchId`` and
    ``sql.streaming.queryId`` on every job of a micro-batch; the query id is
    stored in the checkpoint, so it is the same after a restart.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        raise SinkWriteError("the spate sink's write() runs inside a Spark task, and found none")
    batch = context.getLocalProperty("streaming.sql.batchId")
    query = context.getLocalProperty("sql.streaming.queryId")
    return TaskInfo(
        partition=context.partitionId(),
        attempt=context.attemptNumber(),
        batch_id=int(batch) if batch not in (None, "") else None,
        query_id=query or None,
    )


@dataclass(frozen=True)
class SinkCommitMessage(WriterCommitMessage):
    """A task's report to the driver. ``transaction`` is the open transaction the driver must end.

    ``already_committed``: the task found its batch recorded as committed and wrote nothing.
    """

    partition: int
    rows: int
    batch_id: int | None = None
    transaction: OpenTransaction | None = None
    already_committed: bool = False


class DeliveryTracker:
    """Counts acknowledged sends and keeps the first failure (callbacks run on the sender thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.acknowledged = 0
        self.first_error: BaseException | None = None

    def __call__(self, metadata: Any, error: BaseException | None) -> None:
        with self._lock:
            if error is None:
                self.acknowledged += 1
            elif self.first_error is None:
                self.first_error = error


def _send_all(producer: Producer, records: Iterable[OutgoingRecord], tracker: DeliveryTracker) -> int:
    sent = 0
    for record in records:
        producer.send(
            record.topic,
            record.value,
            key=record.key,
            partition=record.partition,
            headers=record.headers or None,
            on_delivery=tracker,
        )
        sent += 1
        if tracker.first_error is not None:
            break
    return sent


def _check_delivered(tracker: DeliveryTracker, sent: int, what: str) -> None:
    if tracker.first_error is not None:
        raise SinkWriteError(f"{what}: a record was not delivered: {tracker.first_error}") from tracker.first_error
    if tracker.acknowledged != sent:
        raise SinkWriteError(f"{what}: {sent - tracker.acknowledged} of {sent} record(s) have no acknowledgement")


def _peek(records: Iterator[OutgoingRecord]) -> Iterator[OutgoingRecord] | None:
    """None when there is no record; else an iterator over all of them."""
    first = next(records, None)
    return None if first is None else itertools.chain([first], records)


@dataclass
class TaskWriter:
    """Writes one task's records; the factories are swapped in tests."""

    options: SinkOptions
    producer_factory: ProducerFactory = Producer
    admin_factory: AdminFactory = Admin
    pool: ClientPool | None = None  # None: the process's shared pool

    def _producer(self, **extra: Any) -> Producer:
        settings = {**self.options.producer_settings, **extra}
        return self.producer_factory(self.options.bootstrap_servers, **settings)

    def _borrow(self, kind: str, factory: Callable[..., Any], settings: dict[str, Any]):
        """A pooled client made by ``factory(bootstrap_servers, **settings)``, for ``with``."""
        servers = self.options.bootstrap_servers
        pool = self.pool if self.pool is not None else shared_pool()
        return pool.borrow(PoolKey.of(kind, factory, servers, settings), lambda: factory(servers, **settings))

    # --- at least once ------------------------------------------------------------------------------

    def write_at_least_once(self, records: Iterator[OutgoingRecord], info: TaskInfo) -> SinkCommitMessage:
        pending = _peek(records)
        if pending is None:
            return SinkCommitMessage(partition=info.partition, rows=0, batch_id=info.batch_id)
        with self._borrow("producer", self.producer_factory, dict(self.options.producer_settings)) as producer:
            tracker = DeliveryTracker()
            sent = _send_all(producer, pending, tracker)
            producer.flush(self.options.commit_timeout_ms / 1000)
            _check_delivered(tracker, sent, f"task {info.partition}")
        return SinkCommitMessage(partition=info.partition, rows=sent, batch_id=info.batch_id)

    # --- exactly once -------------------------------------------------------------------------------

    def write_transactional(
        self,
        records: Iterator[OutgoingRecord],
        info: TaskInfo,
        transactional_id: str,
        bookkeeping: BatchBookkeeping | None,
    ) -> SinkCommitMessage:
        """Write inside a transaction left open for the driver.

        With ``bookkeeping`` (streaming) the batch id is recorded in the same
        transaction and a batch already recorded is skipped; without it
        (a batch job) every attempt writes.
        """
        if bookkeeping is not None and info.batch_id is None:
            raise SinkWriteError(
                "exactly_once streaming write without a micro-batch id: the task has no "
                "streaming.sql.batchId property"
            )
        pending = _peek(records)
        if pending is None:
            return SinkCommitMessage(partition=info.partition, rows=0, batch_id=info.batch_id)
        timeout_ms = self.options.commit_timeout_ms
        producer = self._producer(
            transactional_id=transactional_id, transaction_timeout_ms=self.options.transaction_timeout_ms
        )
        began = False
        try:
            producer.init_transactions(timeout_ms)
            if bookkeeping is not None and self._already_committed(bookkeeping, info, timeout_ms):
                logger.info("%s: batch %s already committed; writing nothing", transactional_id, info.batch_id)
                producer.close(timeout_ms / 1000)
                return SinkCommitMessage(
                    partition=info.partition, rows=0, batch_id=info.batch_id, already_committed=True
                )
            producer.begin_transaction()
            began = True
            tracker = DeliveryTracker()
            sent = _send_all(producer, pending, tracker)
            if bookkeeping is not None:
                producer.send_offsets_to_transaction(
                    bookkeeping.offsets_for(info.batch_id, info.query_id), bookkeeping.group_id(info.partition)
                )
            producer.flush(timeout_ms / 1000)
            _check_delivered(tracker, sent, transactional_id)
            # Closes the producer but leaves the transaction open: the driver commits it.
            transaction = hand_off_transaction(producer, timeout_ms=timeout_ms)
        except BaseException:
            if began:
                _abort_quietly(producer, transactional_id, timeout_ms)
            producer.close(timeout_ms / 1000)
            raise
        return SinkCommitMessage(
            partition=info.partition, rows=sent, batch_id=info.batch_id, transaction=transaction
        )

    def _already_committed(self, bookkeeping: BatchBookkeeping, info: TaskInfo, timeout_ms: float) -> bool:
        with self._borrow("admin", self.admin_factory, self.options.admin_settings()) as admin:
            last = bookkeeping.last_committed_batch(admin, info.partition, timeout_ms=timeout_ms)
            if last is None:
                bookkeeping.ensure_topic(admin, timeout_ms=timeout_ms)
                return False
        if last.query_id is not None and info.query_id is not None and last.query_id != info.query_id:
            logger.warning(
                "%s was last used by query %s (batch %d), not by this query %s: a new checkpoint with the same "
                "transactionalIdPrefix; writing batch %s", bookkeeping.group_id(info.partition), last.query_id,
                last.batch_id, info.query_id, info.batch_id,
            )
        return last.covers(info.batch_id, info.query_id)


def _abort_quietly(producer: Producer, transactional_id: str, timeout_ms: float) -> None:
    try:
        producer.abort_transaction(timeout_ms)
    except Exception as exc:  # the task is failing already; the next attempt fences this one anyway
        logger.warning("%s: abort after a failed write did not complete: %s", transactional_id, exc)
