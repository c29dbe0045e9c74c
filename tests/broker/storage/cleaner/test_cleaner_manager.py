"""Which part of a log is cleanable and when a log is due (cleaner_manager.py)."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.cleaner.cleaner_manager import (
    Candidate,
    choose_dirtiest,
    cleanable_range,
    is_due,
    planned_by_broker,
)
from broker_core.storage.cleaner.plan import LogBounds
from broker_core.storage.config import LogConfig
from broker_core.storage.files import TopicPartition
from broker_core.storage.segment import SegmentInfo

NOW = 1_000_000


def segments(*bases: int, size: int = 100, ts: int = 10) -> list[SegmentInfo]:
    """Segments at ``bases``, each ending just below the next; the last one is the active segment."""
    return [SegmentInfo(b, b + 5, size, ts, Path(f"/x/{b}.log")) for b in bases]


def bounds(clean_up_to: int = 0, active: int = 400, hw: int = 10_000, unstable: int | None = None) -> LogBounds:
    return LogBounds(0, clean_up_to, active, unstable, hw)


def test_the_dirty_part_runs_from_the_checkpoint_to_the_active_segment():
    found = cleanable_range(segments(0, 100, 200, 300, 400), bounds(clean_up_to=100), now_ms=NOW,
                            min_compaction_lag_ms=0)
    assert [s.base_offset for s in found.clean] == [0]
    assert [s.base_offset for s in found.dirty] == [100, 200, 300]
    assert (found.first_dirty_offset, found.first_uncleanable_offset) == (100, 400)
    assert found.dirty_ratio == 0.75


def test_cleaning_stops_before_the_segment_holding_the_high_watermark_or_an_open_transaction():
    by_hw = cleanable_range(segments(0, 100, 200, 300, 400), bounds(hw=250), now_ms=NOW, min_compaction_lag_ms=0)
    assert [s.base_offset for s in by_hw.dirty] == [0, 100]
    by_txn = cleanable_range(segments(0, 100, 200, 300, 400), bounds(unstable=150), now_ms=NOW,
                             min_compaction_lag_ms=0)
    assert [s.base_offset for s in by_txn.dirty] == [0]


def test_segments_with_records_younger_than_the_min_compaction_lag_are_not_cleanable():
    old = segments(0, 100, ts=NOW - 10_000)
    young = [SegmentInfo(200, 205, 100, NOW - 10, Path("/x/200.log"))]
    found = cleanable_range(old + young + segments(300, 400), bounds(), now_ms=NOW, min_compaction_lag_ms=1_000)
    assert [s.base_offset for s in found.dirty] == [0, 100]


def test_a_log_is_due_at_its_dirty_ratio_or_once_its_oldest_dirty_record_passes_the_max_lag():
    found = cleanable_range(segments(0, 100, 200, 300, 400), bounds(clean_up_to=300), now_ms=NOW,
                            min_compaction_lag_ms=0)
    assert found.dirty_ratio == 0.25
    assert not is_due(found, LogConfig(min_cleanable_dirty_ratio=0.5), now_ms=NOW, first_dirty_timestamp=NOW - 5)
    assert is_due(found, LogConfig(min_cleanable_dirty_ratio=0.2), now_ms=NOW, first_dirty_timestamp=NOW - 5)
    lagging = LogConfig(min_cleanable_dirty_ratio=0.5, max_compaction_lag_ms=1_000)
    assert is_due(found, lagging, now_ms=NOW, first_dirty_timestamp=NOW - 5_000)


def test_the_dirtiest_due_log_goes_first():
    a = cleanable_range(segments(0, 100, 200), bounds(clean_up_to=100, active=200), now_ms=NOW,
                        min_compaction_lag_ms=0)
    b = cleanable_range(segments(0, 100, 200), bounds(active=200), now_ms=NOW, min_compaction_lag_ms=0)
    chosen = choose_dirtiest([Candidate(TopicPartition("a", 0), a, True), Candidate(TopicPartition("b", 0), b, True)])
    assert chosen is not None and chosen.tp.topic == "b"
    assert choose_dirtiest([Candidate(TopicPartition("b", 0), b, False)]) is None


def test_the_broker_plans_compacted_topics_except_those_left_to_spark_unless_internal():
    compact = LogConfig(cleanup_policy="compact")
    spark = LogConfig(cleanup_policy="compact,delete", spate_compaction_planner="spark")
    assert planned_by_broker(TopicPartition("t", 0), compact)
    assert not planned_by_broker(TopicPartition("t", 0), spark)
    assert planned_by_broker(TopicPartition("__consumer_offsets", 3), spark)
    assert not planned_by_broker(TopicPartition("t", 0), LogConfig(cleanup_policy="delete"))


def test_a_checkpoint_past_the_active_segment_of_a_truncated_log_starts_over_at_the_log_start():
    found = cleanable_range(segments(0, 100, 200), bounds(clean_up_to=900, active=200), now_ms=NOW,
                            min_compaction_lag_ms=0)
    assert found.first_dirty_offset == 0
    assert [s.base_offset for s in found.dirty] == [0, 100]
