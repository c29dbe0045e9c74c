"""Which compacted log to clean next (Kafka's ``LogCleanerManager``), as pure decisions.

For one log, the cleanable range runs from the first dirty offset (the
cleaner checkpoint, or the log start offset when that is later) up to the
first uncleanable offset: the base offset of the segment that holds the
active segment, the high watermark, the first offset of an open transaction,
or a record younger than ``min.compaction.lag.ms``, whichever comes first.
Only whole rolled segments are cleaned.

A log is due when its dirty ratio (dirty bytes over all bytes of cleanable
segments) reaches ``min.cleanable.dirty.ratio``, or when its first dirty
segment holds a record older than ``max.compaction.lag.ms``. Of the due
logs, the dirtiest goes first. The broker's cleaner plans a topic whose
``spate.compaction.planner`` is ``spark`` only when it is internal (the
group and transaction state topics must stay small without any job).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from broker_core.storage.cleaner.plan import LogBounds
from broker_core.storage.config import SPARK_PLANNER, LogConfig
from broker_core.storage.files import TopicPartition
from broker_core.storage.segment import SegmentInfo

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass(frozen=True)
class CleanableRange:
    """The rolled segments of one log split at the first dirty offset, up to the first uncleanable one."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean: tuple[SegmentInfo, ...]
    dirty: tuple[SegmentInfo, ...]

    @property
    def clean_bytes(self) -> int:
        return sum(segment.size for segment in self.clean)

    @property
    def dirty_bytes(self) -> int:
        return sum(segment.size for segment in self.dirty)

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


def planned_by_broker(tp: TopicPartition, config: LogConfig) -> bool:
    """Whether the broker's own cleaner plans this log's compaction."""
    if not config.compact_enabled:
        return False
    return config.spate_compaction_planner != SPARK_PLANNER or tp.topic in INTERNAL_TOPICS


def cleanable_range(
    segments: Sequence[SegmentInfo], bounds: LogBounds, *, now_ms: int, min_compaction_lag_ms: int
) -> CleanableRange:
    """Split ``segments`` (every segment of the log, the active one last) as the module docstring says."""
    first_dirty = bounds.first_dirty_offset
    rolled = list(segments[:-1])
    ends = [segment.base_offset for segment in segments[1:]]
    uncleanable = min(bounds.active_base_offset, bounds.stable_end)
    if min_compaction_lag_ms > 0:
        for segment in rolled:
            if segment.max_timestamp > now_ms - min_compaction_lag_ms:
                uncleanable = min(uncleanable, segment.base_offset)
                break
    clean: list[SegmentInfo] = []
    dirty: list[SegmentInfo] = []
    for segment, end in zip(rolled, ends):
        if end > uncleanable:
            break
        (clean if end <= first_dirty else dirty).append(segment)
    # Cleaning stops at a segment boundary below the first uncleanable offset.
    boundary = ends[len(clean) + len(dirty) - 1] if clean or dirty else first_dirty
    return CleanableRange(first_dirty, max(boundary, first_dirty), tuple(clean), tuple(dirty))


def is_due(cleanable: CleanableRange, config: LogConfig, *, now_ms: int, first_dirty_timestamp: int) -> bool:
    """Whether the log should be cleaned now (``first_dirty_timestamp``: earliest record time of its dirty part, -1 unknown)."""
    if not cleanable.dirty:
        return False
    if cleanable.dirty_ratio >= config.min_cleanable_dirty_ratio:
        return True
    return first_dirty_timestamp >= 0 and now_ms - first_dirty_timestamp > config.max_compaction_lag_ms


@dataclass(frozen=True)
class Candidate:
    tp: TopicPartition
    cleanable: CleanableRange
    due: bool


def choose_dirtiest(candidates: Sequence[Candidate]) -> Candidate | None:
    """The due candidate with the largest dirty ratio, or None."""
    due = [candidate for candidate in candidates if candidate.due]
    return max(due, key=lambda c: c.cleanable.dirty_ratio, default=None)
