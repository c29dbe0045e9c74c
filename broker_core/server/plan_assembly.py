"""Compaction plans arriving over the wire: decoding their entries and putting their chunks together.

A plan made outside the broker (the Spark compaction job) names every key
by the 16-byte MD5 hash of its bytes, as Kafka's offset map does, next to
the offset of the key's latest record: 24-byte entries, sent in numbered
chunks under one plan id. ``PlanAssembly`` keeps one plan in progress per
partition: chunk 0 starts it (dropping any other plan of that partition, the
work of a job that died), each later chunk must be the next one of the same
plan and range, and a plan idle for ``max_idle_ms`` is forgotten. Two keys
whose hashes collide count as one key (the older's records may be removed),
the risk Kafka's cleaner takes too.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from typing import Iterator

from broker_core.storage.cleaner.offset_map import OffsetMap
from broker_core.storage.cleaner.plan import CleanPlan
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.clean_plan import ENTRY_SIZE

SPARK_ORIGIN = "spark"
_ENTRY = struct.Struct(">16sq")


def key_hash(key: bytes) -> bytes:
    """The 16 bytes a plan names ``key`` by."""
    return hashlib.md5(key, usedforsecurity=False).digest()


class HashedOffsetMap(OffsetMap):
    """An offset map keyed by key hashes: the cleaner asks for a key, the map looks up its hash."""

    def get(self, key: bytes) -> int:
        return super().get(key_hash(key))


class InvalidPlanError(KafkaError):
    """A plan chunk that cannot be taken (malformed, out of order, out of its range)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_REQUEST, message)


def decode_entries(data: bytes, dirty_start: int, dirty_end: int) -> Iterator[tuple[bytes, int]]:
    """The ``(hash, offset)`` pairs of a chunk; every offset must lie in ``[dirty_start, dirty_end)``."""
    if len(data) % ENTRY_SIZE:
        raise InvalidPlanError(f"plan entries take {ENTRY_SIZE} bytes each; got {len(data)} bytes")
    for key, offset in _ENTRY.iter_unpack(data):
        if not dirty_start <= offset < dirty_end:
            raise InvalidPlanError(f"a plan entry names offset {offset}, outside [{dirty_start}, {dirty_end})")
        yield key, offset


@dataclass
class PendingPlan:
    plan_id: str
    leader_epoch: int
    dirty_start: int
    dirty_end: int
    updated_ms: int
    chunks: int = 0
    latest: dict[bytes, int] = field(default_factory=dict)

    def add(self, data: bytes) -> None:
        latest = self.latest
        for key, offset in decode_entries(data, self.dirty_start, self.dirty_end):
            if offset > latest.get(key, -1):
                latest[key] = offset
        self.chunks += 1

    def to_plan(self, tp: TopicPartition) -> CleanPlan:
        return CleanPlan(tp, self.dirty_start, self.dirty_end, HashedOffsetMap.of(self.latest), SPARK_ORIGIN)


@dataclass(frozen=True)
class PlanChunk:
    plan_id: str
    chunk: int
    leader_epoch: int
    dirty_start: int
    dirty_end: int
    entries: bytes


class PlanAssembly:
    """The plans in progress, one per partition (used from the event loop only)."""

    def __init__(self, max_idle_ms: int = 300_000) -> None:
        self.max_idle_ms = max_idle_ms
        self._pending: dict[TopicPartition, PendingPlan] = {}

    def add(self, tp: TopicPartition, chunk: PlanChunk, now_ms: int) -> PendingPlan:
        """Take one chunk; the plan so far. Raises ``InvalidPlanError`` for a chunk out of place."""
        self._expire(now_ms)
        if chunk.dirty_end < chunk.dirty_start:
            raise InvalidPlanError(f"the plan's range [{chunk.dirty_start}, {chunk.dirty_end}) is empty backwards")
        if chunk.chunk == 0:
            pending = PendingPlan(chunk.plan_id, chunk.leader_epoch, chunk.dirty_start, chunk.dirty_end, now_ms)
        else:
            pending = self._pending.get(tp)
            if pending is None or pending.plan_id != chunk.plan_id:
                raise InvalidPlanError(f"no plan {chunk.plan_id!r} in progress for {tp} (it expired, or another "
                                       "plan replaced it); send it again from chunk 0")
            if chunk.chunk != pending.chunks or (chunk.dirty_start, chunk.dirty_end) != (
                    pending.dirty_start, pending.dirty_end):
                self._pending.pop(tp, None)
                raise InvalidPlanError(f"plan {chunk.plan_id!r} for {tp}: chunk {chunk.chunk} does not follow "
                                       f"chunk {pending.chunks - 1} of the same range; send it again from chunk 0")
        try:
            pending.add(chunk.entries)
        except InvalidPlanError:
            self._pending.pop(tp, None)
            raise
        pending.updated_ms = now_ms
        self._pending[tp] = pending
        return pending

    def take(self, tp: TopicPartition) -> PendingPlan | None:
        """Remove and return the plan in progress for ``tp``."""
        return self._pending.pop(tp, None)

    def __contains__(self, tp: object) -> bool:
        return tp in self._pending

    def _expire(self, now_ms: int) -> None:
        for tp in [tp for tp, p in self._pending.items() if now_ms - p.updated_ms > self.max_idle_ms]:
            del self._pending[tp]
