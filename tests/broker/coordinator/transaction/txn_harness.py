"""A transaction coordinator on a manual clock, an in-memory ``__transaction_state`` and recorded markers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from broker_core.coordinator.transaction import (
    MarkerOutcome,
    MarkerRequest,
    MarkersDone,
    TransactionCoordinator,
    TransactionStateManager,
    TxnConfig,
)
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode, KafkaError
from spate.records import DecodedBatch, Record, build_batch, iter_decoded_batches
from tests.broker.coordinator.group.group_harness import ManualScheduler

E = ErrorCode
TIMEOUT_MS = 60_000
CONFIG = TxnConfig(state_log_partitions=3, abort_timed_out_interval_ms=1_000, id_expiration_ms=3_600_000,
                   remove_expired_interval_ms=60_000)
TOPICS = {"orders": 3, "payments": 2, "__consumer_offsets": 4}


class MemoryTxnTopic:
    """``__transaction_state`` as real batches in memory; survives coordinator restarts.

    ``led`` lists the partitions the broker leads at start-up (None: all of them); ``loads`` counts reads.
    """

    def __init__(self, partitions: int | None = None, *, led: set[int] | None = None) -> None:
        self.partitions = partitions
        self.batches: dict[int, list[bytes]] = {}
        self.fail_with: ErrorCode | None = None
        self.epoch = 0
        self.led = led
        self.loads: list[int] = []

    def view(self, *, led: set[int]) -> MemoryTxnTopic:
        """The same stored partitions as another broker sees them: it leads ``led`` at start-up."""
        other = MemoryTxnTopic(self.partitions, led=led)
        other.batches = self.batches
        return other

    def partition_count(self) -> int | None:
        return self.partitions

    def create(self) -> int:
        if self.partitions is None:
            self.partitions = CONFIG.state_log_partitions
        return self.partitions

    def led_partitions(self) -> list[int]:
        return [p for p in range(self.partitions or 0) if self.led is None or p in self.led]

    def leader_epoch(self, partition: int) -> int:
        return self.epoch

    def append(self, partition: int, records: Sequence[tuple[bytes, bytes | None]], timestamp_ms: int) -> None:
        if self.fail_with is not None:
            raise KafkaError(self.fail_with, "injected append failure")
        log = self.batches.setdefault(partition, [])
        base = len(log)
        log.append(build_batch([Record(base + i, timestamp_ms, k, v) for i, (k, v) in enumerate(records)],
                               base_offset=base))

    def read_batches(self, partition: int) -> Iterator[DecodedBatch]:
        self.loads.append(partition)
        for raw in self.batches.get(partition, []):
            yield from iter_decoded_batches(raw)

    def records(self) -> list[Record]:
        return [r for p in sorted(self.batches) for b in self.read_batches(p) for r in b.records]


@dataclass
class RecordingMarkers:
    """Markers written, by partition; partitions in ``unavailable`` are reported for a retry."""

    written: list[tuple[TopicPartition, MarkerRequest]] = field(default_factory=list)
    unavailable: set[TopicPartition] = field(default_factory=set)

    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition], done: MarkersDone) -> None:
        outcome = MarkerOutcome()
        for tp in partitions:
            if tp in self.unavailable:
                outcome.retry.add(tp)
            else:
                self.written.append((tp, request))
                outcome.written.add(tp)
        done(outcome)

    def for_producer(self, producer_id: int) -> dict[TopicPartition, MarkerRequest]:
        return {tp: r for tp, r in self.written if r.producer_id == producer_id}


class TxnHarness:
    def __init__(self, topic: MemoryTxnTopic | None = None, scheduler: ManualScheduler | None = None,
                 markers: RecordingMarkers | None = None) -> None:
        self.topic = topic if topic is not None else MemoryTxnTopic()
        self.scheduler = scheduler if scheduler is not None else ManualScheduler()
        self.markers = markers if markers is not None else RecordingMarkers()
        self._next_id = 1000
        self.coordinator = TransactionCoordinator(
            CONFIG,
            TransactionStateManager(self.topic, partitions=CONFIG.state_log_partitions),
            self.markers,
            self.scheduler,
            next_producer_id=self._allocate,
            partition_exists=lambda tp: 0 <= tp.partition < TOPICS.get(tp.topic, 0),
            offsets_partition_for=lambda group: TopicPartition("__consumer_offsets", len(group) % 4),
        )
        self.coordinator.startup()

    def _allocate(self) -> int:
        self._next_id += 1
        return self._next_id

    def restarted(self) -> TxnHarness:
        """A new coordinator over the same log and clock, as after a crash."""
        self.coordinator.shutdown()
        return TxnHarness(self.topic, self.scheduler)

    def init(self, transactional_id: str = "txn-1", timeout_ms: int = TIMEOUT_MS) -> tuple[int, int]:
        result = self.coordinator.init_producer_id(transactional_id, timeout_ms)
        assert result.error is E.NONE, result
        return result.producer_id, result.producer_epoch

    def add(self, producer: tuple[int, int], *tps: TopicPartition, transactional_id: str = "txn-1") -> ErrorCode:
        errors = set(self.coordinator.add_partitions(transactional_id, *producer, tps).values())
        assert len(errors) == 1, errors
        return errors.pop()

    def end(self, producer: tuple[int, int], *, commit: bool, transactional_id: str = "txn-1") -> ErrorCode:
        return self.coordinator.end_transaction(transactional_id, *producer, commit)

    def state(self, transactional_id: str = "txn-1"):
        return self.coordinator.describe(transactional_id).state


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)
