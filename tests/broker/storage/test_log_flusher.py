"""When a log's data reaches the disk: the recovery point and the flush policy (log_flusher.py, through LocalLog)."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import FakeClock, append_batches, make_batch, small_config


def open_log(log_dir: Path, clock: FakeClock, **config: object) -> LocalLog:
    return LocalLog.open(log_dir, small_config(**config), clock=clock)


def test_flush_messages_flushes_and_advances_the_recovery_point(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, flush_messages=5)
    log.append(make_batch(records=3))
    assert log.recovery_point == 0
    log.append(make_batch(records=3))
    assert log.recovery_point == 6
    assert log.unflushed_messages == 0


def test_flush_ms_flushes_only_once_the_interval_passed(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, flush_ms=1_000)
    log.append(make_batch(records=3))
    assert not log.flush_if_due(clock.advance(999))
    assert log.flush_if_due(clock.advance(1))
    assert log.recovery_point == 3


def test_rolled_segments_are_flushed_by_the_scheduler_not_the_append(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(segment_bytes=350), clock=clock)
    append_batches(log, 7, records=1)
    assert log.recovery_point == 0
    assert log.flush_rolled_segments()
    assert log.recovery_point == 6
    assert not log.flush_rolled_segments()


def test_a_scheduled_flush_fsyncs_on_another_thread_and_moves_the_recovery_point_on_completion(
    log_dir: Path, clock: FakeClock, monkeypatch
):
    import threading

    from broker_core.storage import log_flusher

    synced: list[tuple[str, str]] = []
    real = log_flusher.fsync_file
    monkeypatch.setattr(log_flusher, "fsync_file",
                        lambda path: (synced.append((path.name, threading.current_thread().name)), real(path)))
    log = LocalLog.open(log_dir, small_config(segment_bytes=350), clock=clock)
    append_batches(log, 7, records=1)
    pending = log.begin_scheduled_flush(clock())
    assert pending is not None and pending.target == 6 and log.recovery_point == 0
    worker = threading.Thread(target=pending.run, name="flush-worker")
    worker.start()
    worker.join(10)
    append_batches(log, 1, records=1)  # appends go on meanwhile
    assert log.recovery_point == 0  # not before completion
    log.complete_flush(pending)
    assert log.recovery_point == 6
    assert {thread for _, thread in synced} == {"flush-worker"}
    assert any(name.endswith(".log") for name, _ in synced) and any(name.endswith(".index") for name, _ in synced)
    assert log.begin_scheduled_flush(clock()) is None  # the active segment waits for flush.ms


def test_a_flush_completed_after_a_truncation_leaves_the_recovery_point(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, flush_ms=0)
    append_batches(log, 6, records=1)
    pending = log.begin_scheduled_flush(clock.advance(1))
    assert pending is not None and pending.target == 6
    log.truncate_to(2)
    pending.run()
    log.complete_flush(pending)
    assert log.recovery_point <= 2


def test_a_file_deleted_before_the_fsync_is_skipped(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, flush_ms=0)
    append_batches(log, 3, records=1)
    pending = log.begin_scheduled_flush(clock.advance(1))
    pending.files.append(log_dir / "00000000000000000099.log")
    pending.run()
    assert pending.error is None
    log.complete_flush(pending)
    assert log.recovery_point == 3


def test_a_failed_fsync_raises_a_log_dir_error_on_completion_and_keeps_the_recovery_point(
    log_dir: Path, clock: FakeClock
):
    import pytest

    from broker_core.storage.errors import LogDirError

    log = open_log(log_dir, clock, flush_ms=0)
    append_batches(log, 3, records=1)
    pending = log.begin_scheduled_flush(clock.advance(1))
    pending.error = OSError(5, "Input/output error")
    with pytest.raises(LogDirError):
        log.complete_flush(pending)
    assert log.recovery_point == 0
