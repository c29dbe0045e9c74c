"""Retention by time and size, DeleteRecords, and the pure retention rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.local_log import LocalLog
from broker_core.storage.retention import (
    DeletionReason,
    RetentionCandidate,
    RetentionPolicy,
    deletable_prefix,
)
from tests.broker.storage.batch_factory import FakeClock, make_batch, small_config

DAY = 24 * 3600 * 1000


def log_of_segments(log_dir: Path, clock: FakeClock, ages_ms: list[int], **config: object) -> LocalLog:
    """One segment per age (batch timestamp = now - age), each 3 batches of 2 records."""
    log = LocalLog.open(log_dir, small_config(**config), clock=clock)
    for age in ages_ms:
        log.roll()
        for _ in range(3):
            log.append(make_batch(records=2, max_timestamp=clock.now - age, payload_size=40))
    return log


def test_segments_older_than_retention_ms_are_deleted_oldest_first(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 9 * DAY, 1 * DAY, 0], retention_ms=7 * DAY)
    assert log.delete_old_segments(clock.now) == 2
    assert [s.base_offset for s in log.segments] == [12, 18]
    assert log.log_start_offset == 12


def test_retention_ms_stops_at_the_first_segment_still_young_enough(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 1 * DAY, 10 * DAY, 0], retention_ms=7 * DAY)
    assert log.delete_old_segments(clock.now) == 1
    assert log.log_start_offset == 6


def test_the_active_segment_is_never_deleted(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 10 * DAY], retention_ms=DAY)
    assert log.delete_old_segments(clock.advance(30 * DAY)) == 1
    assert [s.base_offset for s in log.segments] == [6]
    assert log.log_end_offset == 12


def test_retention_ms_of_minus_one_keeps_everything(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [400 * DAY, 300 * DAY, 0], retention_ms=-1)
    assert log.delete_old_segments(clock.now) == 0


def test_retention_is_measured_against_an_injected_clock(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [0, 0, 0], retention_ms=DAY)
    assert log.delete_old_segments(clock.now + DAY) == 0
    assert log.delete_old_segments(clock.now + DAY + 1) == 2


def test_retention_bytes_deletes_until_the_log_fits(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [0, 0, 0, 0], retention_bytes=700)
    segment_size = log.segments[0].size  # 303 bytes
    assert log.size_in_bytes == 4 * segment_size
    # Deleting a second segment would leave 606 bytes, under the limit.
    assert log.delete_old_segments(clock.now) == 1
    assert log.size_in_bytes == 3 * segment_size
    log.update_config(small_config(retention_bytes=2 * segment_size))
    assert log.delete_old_segments(clock.now) == 1
    assert log.size_in_bytes == 2 * segment_size


def test_only_segments_below_the_high_watermark_are_deleted(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 10 * DAY, 10 * DAY, 0], retention_ms=DAY)
    assert log.delete_old_segments(clock.now, high_watermark=7) == 1
    assert log.log_start_offset == 6


def test_compact_only_topics_are_not_aged_out(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 10 * DAY, 0], retention_ms=DAY, cleanup_policy="compact")
    assert log.delete_old_segments(clock.now) == 0


def test_delete_records_moves_the_log_start_and_drops_segments_wholly_below(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [0, 0, 0, 0])
    assert log.delete_records_before(13) == 13
    assert [s.base_offset for s in log.segments] == [12, 18]
    assert log.log_start_offset == 13
    assert not log.maybe_increment_log_start_offset(10)
    assert log.log_start_offset == 13


def test_delete_records_up_to_the_log_end_keeps_the_active_segment(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [0, 0])
    log.delete_records_before(12)
    assert log.log_start_offset == 12
    assert [s.base_offset for s in log.segments] == [6]
    assert log.read(12, 100).is_empty


def test_delete_records_beyond_the_log_end_is_out_of_range(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [0])
    with pytest.raises(OffsetOutOfRangeError):
        log.delete_records_before(7)


def candidates(*specs: tuple[int, int, int]) -> list[RetentionCandidate]:
    result = []
    base = 0
    for size, ts, records in specs:
        result.append(RetentionCandidate(base, size, ts, base + records))
        base += records
    return result


def test_rules_each_claim_a_prefix_and_the_longest_prefix_wins():
    segs = candidates((100, 0, 10), (100, 50, 10), (100, 1_000, 10))
    chosen = deletable_prefix(
        segs,
        policy=RetentionPolicy(retention_ms=500, retention_bytes=250, delete_enabled=True),
        now_ms=1_000,
        log_start_offset=10,
        total_size=400,
    )
    assert [(c.base_offset, reason) for c, reason in chosen] == [
        (0, DeletionReason.LOG_START_OFFSET),
        (10, DeletionReason.RETENTION_MS),
    ]


def test_size_rule_deletes_while_what_remains_is_at_least_the_limit():
    segs = candidates((100, 0, 1), (100, 0, 1), (100, 0, 1))
    policy = RetentionPolicy(retention_ms=-1, retention_bytes=200, delete_enabled=True)
    assert len(deletable_prefix(segs, policy=policy, now_ms=0, log_start_offset=0, total_size=400)) == 2
    assert len(deletable_prefix(segs, policy=policy, now_ms=0, log_start_offset=0, total_size=399)) == 1
