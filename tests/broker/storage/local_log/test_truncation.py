"""Truncation: what followers use to align their log with the leader's."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import (
    FakeClock,
    append_batches,
    make_batch,
    read_all,
    small_config,
)


def open_log(log_dir: Path, clock: FakeClock) -> LocalLog:
    return LocalLog.open(log_dir, small_config(segment_bytes=1_000, index_interval_bytes=150), clock=clock)


def test_truncate_within_the_active_segment_drops_the_tail(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 4, records=2)
    assert log.truncate_to(4)
    assert log.log_end_offset == 4
    assert read_all(log) == b"".join(stored[:2])


def test_truncate_across_segments_removes_later_segments(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 40, records=2)
    segments_before = len(log.segments)
    assert log.truncate_to(21)  # inside batch 10 (offsets 20-21): it goes as a whole
    assert log.log_end_offset == 20
    assert read_all(log) == b"".join(stored[:10])
    assert len(log.segments) < segments_before
    assert log.segments[-1].next_offset == 20


def test_appends_continue_from_the_truncation_point_with_consistent_indexes(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 40, records=2)
    log.truncate_to(30)
    more = append_batches(log, 20, records=2)
    assert log.read(30, 1).first_offset == 30
    assert read_all(log) == b"".join(stored[:15] + more)
    for offset in range(0, log.log_end_offset, 3):
        assert log.read(offset, 1).first_offset == offset - offset % 2


def test_truncating_at_or_beyond_the_end_changes_nothing(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 3)
    assert not log.truncate_to(6)
    assert not log.truncate_to(100)
    assert log.log_end_offset == 6


def test_truncating_below_the_first_segment_starts_the_log_afresh(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.truncate_fully_and_start_at(100)
    append_batches(log, 3)
    assert log.truncate_to(50)
    assert (log.log_start_offset, log.log_end_offset) == (50, 50)
    assert log.append(make_batch()).first_offset == 50


def test_truncate_fully_and_start_at_empties_the_log_at_a_new_offset(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 30)
    log.truncate_fully_and_start_at(1_000)
    assert (log.log_start_offset, log.log_end_offset, log.recovery_point) == (1_000, 1_000, 1_000)
    assert [s.base_offset for s in log.segments] == [1_000]
    assert log.append(make_batch()).first_offset == 1_000


def test_truncation_survives_an_unclean_restart(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 40, records=2)
    log.flush()
    log.truncate_to(31)
    # No close: the process dies here.
    reopened = LocalLog.open(log_dir, small_config(segment_bytes=1_000, index_interval_bytes=150), clock=clock, recovery_point=log.recovery_point)
    assert reopened.log_end_offset == 30
    assert read_all(reopened) == b"".join(stored[:15])


def test_truncate_to_a_negative_offset_is_refused(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    with pytest.raises(ValueError):
        log.truncate_to(-1)


def test_truncation_lowers_the_recovery_point_and_the_log_start_offset(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 40, records=2)
    log.flush()
    log.delete_records_before(30)
    log.truncate_to(24)
    assert log.recovery_point == 24
    assert log.log_start_offset == 24
