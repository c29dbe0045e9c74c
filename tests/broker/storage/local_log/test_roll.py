"""When the active segment rolls: size, age, index capacity, explicit roll."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import (
    FakeClock,
    append_batches,
    make_batch,
    read_all,
    small_config,
)

HOUR = 3600 * 1000


def test_a_segment_rolls_before_an_append_would_exceed_segment_bytes(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(segment_bytes=350), clock=clock)
    append_batches(log, 7, records=1)  # 101 bytes each: three fit in 350
    assert [s.base_offset for s in log.segments] == [0, 3, 6]
    assert all(s.size <= 350 for s in log.segments)


def test_a_segment_rolls_once_segment_ms_passed_since_its_first_batch(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(segment_ms=HOUR), clock=clock)
    log.append(make_batch(max_timestamp=clock.now))
    clock.advance(HOUR)
    log.append(make_batch(max_timestamp=clock.now))
    assert len(log.segments) == 1
    clock.advance(1)
    log.append(make_batch(max_timestamp=clock.now))
    assert [s.base_offset for s in log.segments] == [0, 2]


def test_old_producer_timestamps_do_not_roll_every_append(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(segment_ms=HOUR), clock=clock)
    for _ in range(5):
        log.append(make_batch(max_timestamp=0))
    assert len(log.segments) == 1


def test_an_empty_segment_never_rolls_for_age(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(segment_ms=HOUR), clock=clock)
    clock.advance(10 * HOUR)
    log.append(make_batch())
    assert len(log.segments) == 1


def test_a_full_offset_index_rolls_the_segment(log_dir: Path, clock: FakeClock):
    # Room for 2 offset index entries; an entry every batch after the first.
    log = LocalLog.open(log_dir, small_config(segment_bytes=100_000, index_interval_bytes=0, segment_index_bytes=24), clock=clock)
    stored = append_batches(log, 10, records=1)
    assert len(log.segments) > 1
    assert read_all(log) == b"".join(stored)


def test_rolled_segments_have_trimmed_indexes_and_a_final_time_entry(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(index_interval_bytes=10_000), clock=clock)
    append_batches(log, 3)
    log.roll()
    old = log_dir / "00000000000000000000.timeindex"
    assert old.stat().st_size == 12
    assert (log_dir / "00000000000000000000.index").stat().st_size == 0
    assert not (log_dir / "00000000000000000006.index").exists()  # created (preallocated) by its first entry


def test_rolling_an_empty_active_segment_changes_nothing(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(), clock=clock)
    log.roll()
    log.roll()
    assert [s.base_offset for s in log.segments] == [0]


def test_roll_starts_the_new_segment_at_the_log_end(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(), clock=clock)
    append_batches(log, 2, records=5)
    info = log.roll()
    assert info.base_offset == 10
    assert log.append(make_batch()).first_offset == 10
