"""Per-partition queues of batches: where ``send`` puts records and the sender takes them.

Pure bookkeeping: no I/O, no threads, no clock of its own. Every method that
needs the time takes ``now`` (seconds, monotonic), and leaders come from a
``leader_of(topic_partition) -> node id`` function, so tests drive it with
plain numbers. The producer calls it under its lock.

Rules, as in Kafka's RecordAccumulator:

* a record joins the newest batch of its partition if it fits in
  ``batch_size`` bytes, else it starts a new batch (alone if bigger);
* a partition is *ready* when its oldest batch is full, or has waited
  ``linger`` seconds, or is a retry whose backoff has passed, or a flush or
  close is in progress, and its leader is known;
* draining takes at most one batch per partition for each node (Kafka's
  produce requests carry exactly one batch per partition) up to the
  request-size budget, starting at a rotating partition so none starves;
* a batch that has not been delivered ``delivery_timeout`` seconds after it
  was created expires.
"""

from __future__ import annotations

import math
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Iterator

from spate.client.producer.batch import ProducerBatch
from spate.client.producer.record_metadata import RecordMetadata
from spate.records.compression import Compression
from spate.records.record import Header
from spate.structs import TopicPartition

LeaderOf = Callable[[TopicPartition], int]
# Whether the oldest batch of a partition may be sent now (the idempotence rules say no
# while earlier batches of the partition are still in flight and this one is a retry).
CanSend = Callable[[ProducerBatch], bool]


def _always(_: ProducerBatch) -> bool:
    return True


@dataclass(slots=True)
class AppendResult:
    """Where a record went. ``batch_closed``: the partition's batch stopped taking records."""

    batch: ProducerBatch
    new_batch: bool
    batch_closed: bool


@dataclass(slots=True)
class ReadyCheck:
    """Nodes with sendable data, when to look again, and topics whose leaders are unknown."""

    nodes: set[int] = field(default_factory=set)
    next_check: float = math.inf
    unknown_leader_topics: set[str] = field(default_factory=set)


class RecordAccumulator:
    def __init__(
        self,
        *,
        batch_size: int,
        linger: float,
        compression: Compression = Compression.NONE,
        delivery_timeout: float = 120.0,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, not {batch_size}")
        if linger < 0:
            raise ValueError(f"linger must not be negative, not {linger}")
        self.batch_size = batch_size
        self.linger = linger
        self.compression = compression
        self.delivery_timeout = delivery_timeout
        self._batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        # The same queues by (topic, partition): ``append_record`` looks them up without
        # building and hashing a TopicPartition per record.
        self._queues: dict[tuple[str, int], tuple[TopicPartition, deque[ProducerBatch]]] = {}
        # The queue ``append_record`` used last, found again without a dict lookup.
        self._last_topic: str | None = None
        self._last_partition = -1
        self._last_queue: tuple[TopicPartition, deque[ProducerBatch]] | None = None
        self._flushes = 0
        self._drain_start = 0
        self.closing = False

    # --- appending ---------------------------------------------------------------------------------

    def append(
        self,
        topic_partition: TopicPartition,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...],
        future: Future[RecordMetadata] | None,
        now: float,
    ) -> AppendResult:
        """Add one record; ``future``, if given, is settled with the record's outcome."""
        queue = self._queue(topic_partition)
        if queue:
            last = queue[-1]
            if last.try_append(timestamp, key, value, headers, future):
                return AppendResult(last, False, last.is_full)
        batch = ProducerBatch(topic_partition, now, capacity=self.batch_size, compression=self.compression)
        batch.try_append(timestamp, key, value, headers, future)
        queue.append(batch)
        return AppendResult(batch, True, len(queue) > 1 or batch.is_full)

    def append_record(
        self,
        topic: str,
        partition: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...],
        clock: Callable[[], float],
    ) -> tuple[ProducerBatch, bool, bool]:
        """``append`` for the producer's hot path: ``(batch, new_batch, batch_closed)``.

        The record is ``batch.record_count - 1`` in its batch; ``clock`` is
        only read when a batch is created.
        """
        if topic is self._last_topic and partition == self._last_partition:
            known = self._last_queue  # sticky partitioning: usually the same partition as last time
        else:
            known = self._queues.get((topic, partition))
            if known is not None:
                self._last_topic, self._last_partition, self._last_queue = topic, partition, known
        if known is None:
            tp = TopicPartition(topic, partition)
            queue = self._queue(tp)
        else:
            tp, queue = known
            if queue:
                last = queue[-1]
                if headers:
                    if last.try_append(timestamp, key, value, headers):
                        return last, False, last.is_full
                else:
                    full = last.append(timestamp, key, value)
                    if full is not None:
                        return last, False, full
        batch = ProducerBatch(tp, clock(), capacity=self.batch_size, compression=self.compression)
        batch.try_append(timestamp, key, value, headers)
        queue.append(batch)
        return batch, True, len(queue) > 1 or batch.is_full

    def _queue(self, topic_partition: TopicPartition) -> deque[ProducerBatch]:
        queue = self._batches.get(topic_partition)
        if queue is None:
            queue = self._batches[topic_partition] = deque()
            self._queues[(topic_partition.topic, topic_partition.partition)] = (topic_partition, queue)
        return queue

    # --- readiness and draining ----------------------------------------------------------------

    def ready(self, leader_of: LeaderOf, now: float, can_send: CanSend = _always) -> ReadyCheck:
        check = ReadyCheck()
        eager = self._flushes > 0 or self.closing
        for tp, queue in self._batches.items():
            if not queue:
                continue
            first = queue[0]
            check.next_check = min(check.next_check, max(0.0, first.created_at + self.delivery_timeout - now))
            leader = leader_of(tp)
            if leader < 0:
                check.unknown_leader_topics.add(tp.topic)
                continue
            if leader in check.nodes:
                continue
            if first.retry_at > now:
                check.next_check = min(check.next_check, first.retry_at - now)
                continue
            if not can_send(first):
                continue
            waited = now - first.created_at
            if eager or first.attempts > 0 or len(queue) > 1 or first.is_full or waited >= self.linger:
                check.nodes.add(leader)
            else:
                check.next_check = min(check.next_check, self.linger - waited)
        return check

    def drain(
        self,
        leader_of: LeaderOf,
        nodes: set[int],
        max_request_size: int,
        now: float,
        can_send: CanSend = _always,
    ) -> dict[int, list[ProducerBatch]]:
        """Take the batches to send to each of ``nodes``, at most one per partition.

        Each node's batches fit in ``max_request_size`` bytes, except that a
        single larger batch still goes out alone. Drained batches leave
        their queues and never take another record.
        """
        drained: dict[int, list[ProducerBatch]] = {node: [] for node in nodes}
        budget = {node: max_request_size for node in nodes}
        partitions = [tp for tp, queue in self._batches.items() if queue]
        if not partitions:
            return {}
        start = self._drain_start % len(partitions)
        self._drain_start = start + 1
        for tp in partitions[start:] + partitions[:start]:
            leader = leader_of(tp)
            if leader not in drained:
                continue
            queue = self._batches[tp]
            first = queue[0]
            if first.retry_at > now or not can_send(first):
                continue
            size = first.size_in_bytes
            if drained[leader] and size > budget[leader]:
                continue
            queue.popleft()
            budget[leader] -= size
            drained[leader].append(first)
        return {node: batches for node, batches in drained.items() if batches}

    def reenqueue(self, batch: ProducerBatch) -> None:
        """Put a batch back for a retry, ahead of newer batches and in sequence order."""
        queue = self._queue(batch.topic_partition)
        index = 0
        if batch.has_sequence:
            index = next(
                (i for i, queued in enumerate(queue)
                 if not queued.has_sequence or queued.base_sequence > batch.base_sequence),
                len(queue),
            )
        queue.insert(index, batch)

    # --- expiry, flush, close ------------------------------------------------------------------

    def expire(self, now: float) -> list[ProducerBatch]:
        """Remove and return queued batches older than the delivery timeout."""
        expired: list[ProducerBatch] = []
        for queue in self._batches.values():
            while queue and now - queue[0].created_at >= self.delivery_timeout:
                expired.append(queue.popleft())
        return expired

    def begin_flush(self) -> None:
        """Make every partition ready at once until the matching ``end_flush``."""
        self._flushes += 1

    def end_flush(self) -> None:
        self._flushes = max(0, self._flushes - 1)

    def has_batches(self) -> bool:
        return any(self._batches.values())

    def queued_batches(self) -> Iterator[ProducerBatch]:
        for queue in self._batches.values():
            yield from queue

    def abort_all(self) -> list[ProducerBatch]:
        """Remove and return every queued batch (the caller fails them)."""
        batches = [batch for queue in self._batches.values() for batch in queue]
        for queue in self._batches.values():
            queue.clear()
        return batches

    def partition_count(self) -> int:
        return sum(1 for queue in self._batches.values() if queue)
