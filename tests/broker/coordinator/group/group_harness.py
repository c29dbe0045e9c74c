"""A group coordinator on a manual clock and an in-memory ``__consumer_offsets``.

``ManualScheduler`` fires timers only when a test advances time, in due
order. ``MemoryOffsetsTopic`` keeps real RecordBatch bytes per partition
(built and read with the record layer, as the broker's topic does, including
transactional batches and the markers that end them) and can be told to fail
appends. ``Reply`` records the one answer a parked request gets
and fails the test if it gets two.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from broker_core.coordinator.group import GroupConfig, GroupCoordinator, Protocol
from broker_core.coordinator.group.consumer_protocol import encode_subscription
from broker_core.coordinator.group.group_coordinator import TxnVerifier
from broker_core.coordinator.group.offsets_topic import TxnProducer
from broker_core.coordinator.group.results import JoinGroupResult, SyncGroupResult
from spate.protocol.errors import ErrorCode, KafkaError
from spate.records import (
    NO_SEQUENCE,
    ControlType,
    DecodedBatch,
    Record,
    build_batch,
    build_control_batch,
    iter_decoded_batches,
    iter_records,
)

E = ErrorCode
START_MS = 1_700_000_000_000


class _Timer:
    __slots__ = ("due", "callback", "cancelled")

    def __init__(self, due: int, callback: Callable[[], None]) -> None:
        self.due = due
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualScheduler:
    def __init__(self, start_ms: int = START_MS) -> None:
        self.now = start_ms
        self._heap: list[tuple[int, int, _Timer]] = []
        self._seq = itertools.count()

    def now_ms(self) -> int:
        return self.now

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + max(delay_ms, 0), callback)
        heapq.heappush(self._heap, (timer.due, next(self._seq), timer))
        return timer

    def advance(self, ms: int = 0) -> None:
        """Move the clock forward, firing every timer that falls due on the way."""
        target = self.now + ms
        while self._heap and self._heap[0][0] <= target:
            due, _, timer = heapq.heappop(self._heap)
            if timer.cancelled:
                continue
            self.now = max(self.now, due)
            timer.callback()
        self.now = target

    @property
    def pending(self) -> int:
        return sum(1 for _, _, t in self._heap if not t.cancelled)


class MemoryOffsetsTopic:
    """``__consumer_offsets`` held as batches in memory; survives coordinator restarts.

    ``led`` lists the partitions the broker leads at start-up (None: all of them), at ``epoch``;
    ``loads`` counts reads.
    """

    def __init__(self, partitions: int | None = None, *, led: set[int] | None = None) -> None:
        self.partitions = partitions
        self.batches: dict[int, list[bytes]] = {}
        self.fail_with: ErrorCode | None = None
        self.appends = 0
        self.led = led
        self.epoch = 0
        self.loads: list[int] = []

    def view(self, *, led: set[int]) -> MemoryOffsetsTopic:
        """The same stored partitions as another broker sees them: it leads ``led`` at start-up."""
        other = MemoryOffsetsTopic(self.partitions, led=led)
        other.batches = self.batches
        return other

    def partition_count(self) -> int | None:
        return self.partitions

    def create(self) -> int:
        if self.partitions is None:
            self.partitions = 4
        return self.partitions

    def led_partitions(self) -> list[int]:
        return [p for p in range(self.partitions or 0) if self.led is None or p in self.led]

    def leader_epoch(self, partition: int) -> int:
        return self.epoch

    def _next_offset(self, partition: int) -> int:
        return sum(len(list(iter_records(b))) for b in self.batches.get(partition, []))

    def append(
        self,
        partition: int,
        records: Sequence[tuple[bytes, bytes | None]],
        timestamp_ms: int,
        *,
        producer: TxnProducer | None = None,
    ) -> int:
        if self.fail_with is not None:
            raise KafkaError(self.fail_with, "injected append failure")
        base = self._next_offset(partition)
        entries = [Record(base + i, timestamp_ms, k, v) for i, (k, v) in enumerate(records)]
        if producer is None:
            batch = build_batch(entries, base_offset=base)
        else:
            batch = build_batch(
                entries, base_offset=base, producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
                base_sequence=NO_SEQUENCE, is_transactional=True,
            )
        self.batches.setdefault(partition, []).append(batch)
        self.appends += 1
        return base

    def append_raw(self, partition: int, key: bytes | None, value: bytes | None, timestamp_ms: int = START_MS) -> None:
        """Write a record the coordinator would never write (garbage, foreign record types)."""
        base = self._next_offset(partition)
        record = Record(base, timestamp_ms, key, value)
        self.batches.setdefault(partition, []).append(build_batch([record], base_offset=base))

    def write_marker(self, partition: int, producer_id: int, *, commit: bool, producer_epoch: int = 0) -> None:
        """A transaction marker, as the transaction coordinator writes it when a transaction ends."""
        control = ControlType.COMMIT if commit else ControlType.ABORT
        base = self._next_offset(partition)
        self.batches.setdefault(partition, []).append(
            build_control_batch(control, producer_id, producer_epoch, 0, timestamp=START_MS, base_offset=base)
        )

    def read_batches(self, partition: int) -> Iterator[DecodedBatch]:
        self.loads.append(partition)
        for batch in self.batches.get(partition, []):
            yield from iter_decoded_batches(batch)

    def records(self) -> list[Record]:
        """Every data record, partition by partition (markers left out)."""
        return [
            r for p in sorted(self.batches) for b in self.read_batches(p) if not b.header.is_control for r in b.records
        ]


@dataclass
class Reply:
    """The answer to one parked JoinGroup or SyncGroup."""

    results: list[Any] = field(default_factory=list)

    def __call__(self, result: Any) -> None:
        if self.results:
            raise AssertionError(f"request answered twice: {self.results[0]} then {result}")
        self.results.append(result)

    @property
    def done(self) -> bool:
        return bool(self.results)

    @property
    def result(self) -> Any:
        if not self.results:
            raise AssertionError("request not answered yet")
        return self.results[0]

    @property
    def error(self) -> ErrorCode:
        return self.result.error


def subscription(*topics: str) -> bytes:
    return encode_subscription(topics)


RANGE = (Protocol("range", subscription("t")),)


class Harness:
    """Drives one coordinator the way clients would, with defaults that keep tests short."""

    def __init__(
        self,
        *,
        topic: MemoryOffsetsTopic | None = None,
        scheduler: ManualScheduler | None = None,
        create_topic: bool = True,
        txn_verifier: TxnVerifier | None = None,
        **config: Any,
    ) -> None:
        settings = dict(
            min_session_timeout_ms=1000,
            max_session_timeout_ms=60_000,
            initial_rebalance_delay_ms=0,
            offsets_topic_partitions=4,
            offsets_retention_check_interval_ms=60_000,
        )
        settings.update(config)
        self.config = GroupConfig(**settings)
        self.scheduler = scheduler or ManualScheduler()
        self.topic = topic or MemoryOffsetsTopic()
        ids = itertools.count(1)
        self.txn_verifier = txn_verifier
        extra = {} if txn_verifier is None else {"txn_verifier": txn_verifier}
        self.coordinator = GroupCoordinator(
            self.config, self.topic, self.scheduler, member_id_suffix=lambda: f"m{next(ids)}", **extra
        )
        self.coordinator.startup()
        if create_topic:
            self.coordinator.ensure_offsets_topic()
        self.scheduler.advance(0)

    def join(
        self,
        member_id: str = "",
        *,
        group: str = "g",
        instance: str | None = None,
        protocols: Sequence[Protocol] = RANGE,
        protocol_type: str = "consumer",
        session_ms: int = 10_000,
        rebalance_ms: int = 30_000,
        v4: bool = True,
        client_id: str = "client",
    ) -> Reply:
        reply = Reply()
        self.coordinator.join_group(
            group_id=group,
            member_id=member_id,
            group_instance_id=instance,
            client_id=client_id,
            client_host="/127.0.0.1",
            rebalance_timeout_ms=rebalance_ms,
            session_timeout_ms=session_ms,
            protocol_type=protocol_type,
            protocols=protocols,
            require_known_member_id=v4,
            respond=reply,
        )
        return reply

    def join_new(self, **kwargs: Any) -> Reply:
        """A first join through the MEMBER_ID_REQUIRED step; returns the parked second join."""
        first = self.join(**kwargs)
        if first.done and first.error is E.MEMBER_ID_REQUIRED:
            return self.join(first.result.member_id, **kwargs)
        return first

    def sync(
        self,
        member_id: str,
        generation: int,
        assignments: dict[str, bytes] | None = None,
        *,
        group: str = "g",
        instance: str | None = None,
    ) -> Reply:
        reply = Reply()
        self.coordinator.sync_group(
            group_id=group,
            generation_id=generation,
            member_id=member_id,
            group_instance_id=instance,
            assignments=assignments or {},
            respond=reply,
        )
        return reply

    def heartbeat(self, member_id: str, generation: int, *, group: str = "g", instance: str | None = None) -> ErrorCode:
        return self.coordinator.heartbeat(
            group_id=group, member_id=member_id, group_instance_id=instance, generation_id=generation
        )

    def form_group(self, count: int, *, group: str = "g", **kwargs: Any) -> list[JoinGroupResult]:
        """``count`` members join together, the leader assigns ``b"<member id>"`` to each; all Stable."""
        replies = [self.join_new(group=group, **kwargs) for _ in range(count)]
        self.scheduler.advance(0)
        results = [r.result for r in replies]
        if any(r.error is not E.NONE for r in results):
            raise AssertionError(f"joins failed: {results}")
        leader = next(r for r in results if r.member_id == r.leader_id)
        assignment = {m.member_id: m.member_id.encode() for m in leader.members}
        syncs = [
            self.sync(r.member_id, r.generation_id, assignment if r is leader else None, group=group) for r in results
        ]
        for s in syncs:
            if not s.done or s.error is not E.NONE:
                raise AssertionError(f"sync failed: {s.results}")
        return results

    def group(self, group_id: str = "g"):
        return self.coordinator.group_manager.get_group(group_id)

    def restart(self, **config: Any) -> Harness:
        """A new coordinator (new broker process) over the same stored topic."""
        self.coordinator.shutdown()
        settings = {k: getattr(self.config, k) for k in self.config.__dataclass_fields__}
        settings.update(config)
        return Harness(
            topic=self.topic, scheduler=self.scheduler, create_topic=False, txn_verifier=self.txn_verifier, **settings
        )


def sync_result(reply: Reply) -> SyncGroupResult:
    return reply.result
