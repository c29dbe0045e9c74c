"""What one cleaning of one partition covers, and when such a plan is stale.

A plan names the partition, its dirty range (``dirty_start``: how far the log
was clean, ``dirty_end``: the offset the cleaning stops before) and, for
every key seen in that range, the offset of its latest record. The broker's
planner makes plans itself (``planner.py``); a plan made outside the broker
(a batch job that computed latest offsets with Spark) has the same form and
is checked against the log before it is applied: a plan that no longer fits
the log is refused with ``StalePlanError`` and a reason, and the planner
plans again.

Offsets never change, so one plan fits every replica of the partition, each
with its own segment boundaries, cleaner checkpoint and high watermark. A
replica takes a plan that

- starts at or before its first dirty offset (a plan covering part of the
  clean range as well is still exact for the dirty part: the latest record
  of a key in the plan's range is its latest in any range ending there),
- ends past its first dirty offset, at or below its high watermark and
  first open transaction (it holds every record the plan names),

and cleans with it up to the plan's end or as far as it may clean now
(``first_uncleanable_offset``: its active segment, ``min.compaction.lag.ms``),
whichever comes first. An end inside a rolled segment is fine: the batches
of that segment from the end on are kept as they are.

Segments are described by ``SegmentSnapshot``: what the request thread saw
of a rolled segment when the cleaning started.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from broker_core.storage.cleaner.offset_map import OffsetMap
from broker_core.storage.errors import StorageError
from broker_core.storage.files import TopicPartition

BROKER_ORIGIN = "broker"


class StalePlanError(StorageError):
    """A plan no longer fits the log it was made for; ``reason`` says why."""

    def __init__(self, tp: TopicPartition | None, reason: str) -> None:
        super().__init__(f"stale compaction plan for {tp}: {reason}" if tp else f"stale compaction plan: {reason}")
        self.reason = reason


class CleanerError(StorageError):
    """A log cannot be cleaned as configured (e.g. the offset map cannot hold one segment's keys)."""


@dataclass(frozen=True, slots=True)
class SegmentSnapshot:
    """A rolled segment as the cleaning found it.

    ``end_offset`` is the next segment's base offset: everything below it
    and at or above ``base_offset`` belongs to this segment, gaps included.
    """

    base_offset: int
    next_offset: int
    end_offset: int
    size: int
    max_timestamp: int
    path: Path


@dataclass(frozen=True)
class CleanPlan:
    """Latest offset per key of ``[dirty_start, dirty_end)`` of one partition."""

    topic_partition: TopicPartition
    dirty_start: int
    dirty_end: int
    latest_offsets: OffsetMap
    origin: str = BROKER_ORIGIN

    @classmethod
    def from_mapping(
        cls, tp: TopicPartition, dirty_start: int, dirty_end: int, latest: Mapping[bytes, int], origin: str
    ) -> CleanPlan:
        """A plan made outside the broker, from a plain key -> offset mapping."""
        for key, offset in latest.items():
            if not dirty_start <= offset < dirty_end:
                raise StalePlanError(tp, f"key {key!r} maps to offset {offset}, outside [{dirty_start}, {dirty_end})")
        return cls(tp, dirty_start, dirty_end, OffsetMap.of(latest), origin)


@dataclass(frozen=True, slots=True)
class LogBounds:
    """What limits a cleaning of a log right now."""

    log_start_offset: int
    clean_up_to: int  # the cleaner checkpoint: the dirty part starts here
    active_base_offset: int
    first_unstable_offset: int | None
    high_watermark: int

    @property
    def first_dirty_offset(self) -> int:
        """Where the dirty part starts: the checkpoint, never below the log start offset; the log
        start when the checkpoint is past the active segment (the log was truncated below it)."""
        first_dirty = max(self.clean_up_to, self.log_start_offset)
        return self.log_start_offset if first_dirty > self.active_base_offset else first_dirty

    @property
    def stable_end(self) -> int:
        """No cleaning reaches this offset: the high watermark or the first open transaction."""
        unstable = self.first_unstable_offset
        return self.high_watermark if unstable is None else min(unstable, self.high_watermark)


def check_plan(plan: CleanPlan, bounds: LogBounds) -> None:
    """Raise ``StalePlanError`` unless ``plan`` can be applied to a log with ``bounds`` (module docstring)."""
    tp = plan.topic_partition
    if plan.dirty_end < plan.dirty_start:
        raise StalePlanError(tp, f"the dirty range ends at {plan.dirty_end}, before its start {plan.dirty_start}")
    if bounds.log_start_offset > plan.dirty_start:
        raise StalePlanError(
            tp, f"retention moved the log start offset to {bounds.log_start_offset}, past the plan's start "
            f"{plan.dirty_start}"
        )
    first_dirty = bounds.first_dirty_offset
    if plan.dirty_start > first_dirty:
        raise StalePlanError(
            tp, f"the log is clean up to {bounds.clean_up_to} now; the plan starts at {plan.dirty_start}"
        )
    if plan.dirty_end <= first_dirty:
        raise StalePlanError(
            tp, f"the log is clean up to {first_dirty} now; the plan ends at {plan.dirty_end}, adding nothing"
        )
    if plan.dirty_end > bounds.stable_end:
        raise StalePlanError(
            tp, f"the plan reaches {plan.dirty_end}, past the high watermark or an open transaction "
            f"(stable up to {bounds.stable_end})"
        )


def applied_end(plan: CleanPlan, bounds: LogBounds, first_uncleanable_offset: int) -> int:
    """Where cleaning with ``plan`` stops on a log with ``bounds``: the plan's end or as far as the log may be
    cleaned now, whichever comes first. Raises ``StalePlanError`` when that adds nothing."""
    check_plan(plan, bounds)
    end = min(plan.dirty_end, first_uncleanable_offset, bounds.active_base_offset)
    if end <= bounds.first_dirty_offset:
        raise StalePlanError(
            plan.topic_partition, f"the log may be cleaned only up to {end} now (active segment, high watermark, "
            f"open transaction or min.compaction.lag.ms) and is clean up to {bounds.first_dirty_offset}"
        )
    return end
