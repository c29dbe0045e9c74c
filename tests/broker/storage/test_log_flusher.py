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
