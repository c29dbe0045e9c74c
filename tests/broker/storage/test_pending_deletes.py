"""Removed segments keep their files open until file.delete.delay.ms passes."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import FakeClock, append_batches, small_config

DELAY = 60_000


def open_log(log_dir: Path, clock: FakeClock, delay: int = DELAY) -> LocalLog:
    # Three 101-byte batches (6 offsets) per segment: segments start at 0, 6, 12, 18.
    return LocalLog.open(log_dir, small_config(segment_bytes=400, file_delete_delay_ms=delay), clock=clock)


def test_a_removed_segment_s_files_are_renamed_with_the_deleted_suffix(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 12)
    log.delete_records_before(8)
    names = sorted(p.name for p in log_dir.iterdir())
    assert "00000000000000000000.log.deleted" in names
    assert "00000000000000000000.index.deleted" in names
    assert "00000000000000000000.log" not in names
    assert log.pending_deletes == 1


def test_an_open_fetch_slice_stays_readable_until_the_delay_passes(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 12)
    in_flight = log.read(0, 10_000)
    log.delete_records_before(8)
    assert in_flight.read_bytes() == b"".join(stored[: len(in_flight.read_bytes()) // len(stored[0])])
    assert log.run_pending_deletes(clock.now + DELAY - 1) == 0
    assert in_flight.read_bytes()
    assert log.run_pending_deletes(clock.now + DELAY) == 1
    assert not any(p.name.endswith(".deleted") for p in log_dir.iterdir())


def test_with_no_delay_files_go_at_once(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, delay=0)
    append_batches(log, 12)
    log.delete_records_before(8)
    assert not any(p.name.endswith(".deleted") for p in log_dir.iterdir())
    assert log.pending_deletes == 0


def test_closing_the_log_finishes_pending_deletions(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 12)
    log.delete_records_before(8)
    log.close()
    assert not any(p.name.endswith(".deleted") for p in log_dir.iterdir())


def test_deleted_files_left_by_a_crash_are_removed_on_open(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 12)
    log.delete_records_before(8)
    # Crash: reopen without closing.
    reopened = LocalLog.open(log_dir, small_config(segment_bytes=400), clock=clock, log_start_offset=8)
    assert not any(p.name.endswith(".deleted") for p in log_dir.iterdir())
    assert reopened.log_start_offset == 8
    assert reopened.log_end_offset == 24
