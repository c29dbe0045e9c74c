"""An idempotent producer's identity and the sequence numbers of its batches.

An idempotent producer gets a producer id and epoch from InitProducerId and
numbers the records of each partition from 0 upwards. Each batch carries its
first record's sequence; the broker keeps the last five batches of every
producer and partition, answers a retry of one of them as a duplicate
instead of appending it again, and refuses a batch whose sequence leaves a
gap (OUT_OF_ORDER_SEQUENCE_NUMBER). Order is kept by the rule in
:meth:`IdempotenceState.can_send`: a batch that already has a sequence (a
retry) goes out only once nothing else of its partition is in flight, and
retries are queued in sequence order, so the broker sees every partition's
sequences without gaps. A batch that fails for good leaves a gap that the
broker would never accept past, so a non-transactional producer then resets
its identity: a new producer id, sequences from 0, and every batch not yet
acknowledged is numbered afresh under it.

Threads: all of this belongs to the sender thread alone.
"""

from __future__ import annotations

from collections import defaultdict

from spate.client.producer.batch import ProducerBatch
from spate.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from spate.structs import TopicPartition

SEQUENCE_LIMIT = 1 << 31


class IdempotenceState:
    """The producer id and epoch, and per partition the next sequence, the last acknowledged one and what is in flight."""

    def __init__(self) -> None:
        self.transactional_id: str | None = None
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self._next_sequence: dict[TopicPartition, int] = defaultdict(int)
        self._last_acked: dict[TopicPartition, int] = {}
        self._in_flight: dict[TopicPartition, int] = defaultdict(int)
        self.resets = 0

    @property
    def is_transactional(self) -> bool:
        return self.transactional_id is not None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    def set_producer_id(self, producer_id: int, producer_epoch: int) -> None:
        if producer_id < 0 or producer_epoch < 0:
            raise ValueError(f"invalid producer identity {producer_id}/{producer_epoch}")
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self._next_sequence.clear()
        self._last_acked.clear()

    def reset_producer_id(self) -> None:
        """Drop the identity; a new one is fetched and sequences restart at 0."""
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self._next_sequence.clear()
        self._last_acked.clear()
        self.resets += 1

    def is_stale(self, batch: ProducerBatch) -> bool:
        """True for a batch numbered under an identity that has since been reset."""
        return batch.has_sequence and (batch.producer_id, batch.producer_epoch) != (
            self.producer_id,
            self.producer_epoch,
        )

    def can_send(self, batch: ProducerBatch) -> bool:
        """Whether the oldest batch of a partition may be drained now.

        New batches go at once; a retry waits until its partition has nothing in flight.
        """
        if not batch.has_sequence or self.is_stale(batch):
            return True
        return self._in_flight[batch.topic_partition] == 0

    def assign_sequence(self, batch: ProducerBatch) -> None:
        """Number a batch about to be sent (a retry keeps its number)."""
        if batch.has_sequence and not self.is_stale(batch):
            return
        tp = batch.topic_partition
        sequence = self._next_sequence[tp]
        self._next_sequence[tp] = (sequence + batch.record_count) % SEQUENCE_LIMIT
        batch.set_producer_state(self.producer_id, self.producer_epoch, sequence, self.transactional_id is not None)

    def sent(self, batch: ProducerBatch) -> None:
        self._in_flight[batch.topic_partition] += 1

    def returned(self, batch: ProducerBatch) -> None:
        """A sent batch came back (acknowledged or not)."""
        tp = batch.topic_partition
        self._in_flight[tp] = max(0, self._in_flight[tp] - 1)

    def acknowledged(self, batch: ProducerBatch) -> None:
        if batch.has_sequence and not self.is_stale(batch):
            last = (batch.base_sequence + batch.record_count - 1) % SEQUENCE_LIMIT
            self._last_acked[batch.topic_partition] = last

    def is_next_to_acknowledge(self, batch: ProducerBatch) -> bool:
        """Whether every earlier sequence of the partition has been acknowledged.

        OUT_OF_ORDER_SEQUENCE_NUMBER for such a batch is a real gap; for any
        later batch it only means an earlier one is being retried.
        """
        expected = (self._last_acked.get(batch.topic_partition, -1) + 1) % SEQUENCE_LIMIT
        return batch.base_sequence == expected

    def in_flight(self, topic_partition: TopicPartition) -> int:
        return self._in_flight[topic_partition]
