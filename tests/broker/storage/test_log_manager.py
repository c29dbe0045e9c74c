"""The log manager: creating and deleting logs, checkpoints, restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.files import TopicPartition
from broker_core.storage.log_manager import LogManager
from tests.broker.storage.batch_factory import (
    FakeClock,
    append_batches,
    make_batch,
    read_all,
    small_config,
)

CONFIG = small_config(segment_bytes=500, file_delete_delay_ms=1_000)


def manager(dirs: list[Path], clock: FakeClock, **kwargs) -> LogManager:
    return LogManager(dirs, CONFIG, clock=clock, **kwargs)


def test_a_restart_after_clean_shutdown_restores_every_log_and_its_offsets(tmp_path: Path, clock: FakeClock):
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    first = manager(dirs, clock)
    stored = {}
    for topic, partition in [("orders", 0), ("orders", 1), ("my.topic-v2", 7)]:
        log = first.get_or_create_log(topic, partition)
        stored[(topic, partition)] = append_batches(log, 12)
    first.get_log("orders", 0).delete_records_before(9)
    first.shutdown()
    for d in dirs:
        assert (d / ".kafka_cleanshutdown").exists()

    second = manager(dirs, clock)
    assert set(second.all_logs()) == {TopicPartition("orders", 0), TopicPartition("orders", 1), TopicPartition("my.topic-v2", 7)}
    orders0 = second.get_log("orders", 0)
    assert (orders0.log_start_offset, orders0.log_end_offset, orders0.recovery_point) == (9, 24, 24)
    assert read_all(second.get_log("my.topic-v2", 7)) == b"".join(stored[("my.topic-v2", 7)])
    for d in dirs:
        assert not (d / ".kafka_cleanshutdown").exists()


def flushed_orders_starting_at_2(tmp_path: Path, clock: FakeClock) -> LogManager:
    """A manager with one log, orders-0: 6 offsets flushed, its start moved to offset 2."""
    mgr = manager([tmp_path], clock)
    log = mgr.get_or_create_log("orders", 0)
    append_batches(log, 3)
    log.flush()
    log.delete_records_before(2)
    return mgr


def test_checkpoints_list_every_log_of_their_dir(tmp_path: Path, clock: FakeClock):
    mgr = flushed_orders_starting_at_2(tmp_path, clock)
    mgr.checkpoint()
    assert OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint").read() == {TopicPartition("orders", 0): 6}
    assert OffsetCheckpointFile(tmp_path / "log-start-offset-checkpoint").read() == {TopicPartition("orders", 0): 2}


def test_recovery_points_and_log_start_offsets_can_be_checkpointed_apart(tmp_path: Path, clock: FakeClock):
    # Each file has its own interval: log.flush.offset.checkpoint.interval.ms and
    # log.flush.start.offset.checkpoint.interval.ms.
    mgr = flushed_orders_starting_at_2(tmp_path, clock)
    recovery_points = tmp_path / "recovery-point-offset-checkpoint"
    log_starts = tmp_path / "log-start-offset-checkpoint"
    recovery_points.unlink(missing_ok=True)
    log_starts.unlink(missing_ok=True)
    mgr.checkpoint(log_start_offsets=False)
    assert OffsetCheckpointFile(recovery_points).read() == {TopicPartition("orders", 0): 6}
    assert not log_starts.exists()
    mgr.checkpoint(recovery_points=False)
    assert OffsetCheckpointFile(log_starts).read() == {TopicPartition("orders", 0): 2}


def test_an_unclean_restart_recovers_from_the_checkpointed_recovery_point(tmp_path: Path, clock: FakeClock):
    mgr = manager([tmp_path], clock)
    log = mgr.get_or_create_log("orders", 0)
    stored = append_batches(log, 12)
    log.flush()
    mgr.checkpoint()
    more = append_batches(log, 2)
    active = tmp_path / "orders-0" / f"{log.segments[-1].base_offset:020d}.log"
    with open(active, "ab") as f:
        f.write(make_batch()[:40])  # a torn write
    # Crash: no shutdown.
    restarted = manager([tmp_path], clock)
    recovered = restarted.get_log("orders", 0)
    assert recovered.log_end_offset == 28
    assert read_all(recovered) == b"".join(stored + more)


def test_new_logs_go_to_the_log_dir_with_the_fewest_logs(tmp_path: Path, clock: FakeClock):
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    mgr = manager(dirs, clock)
    placed = [mgr.get_or_create_log("t", p).directory.parent for p in range(4)]
    assert placed.count(dirs[0]) == placed.count(dirs[1]) == 2


def test_get_or_create_returns_the_existing_log_and_applies_a_new_config(tmp_path: Path, clock: FakeClock):
    mgr = manager([tmp_path], clock)
    log = mgr.get_or_create_log("t", 0)
    new_config = small_config(retention_ms=5)
    assert mgr.get_or_create_log("t", 0, new_config) is log
    assert log.config == new_config


def test_deleting_a_log_takes_it_offline_now_and_removes_its_files_after_the_delay(tmp_path: Path, clock: FakeClock):
    mgr = manager([tmp_path], clock, unique_id=lambda: "abc123")
    log = mgr.get_or_create_log("orders", 0)
    stored = append_batches(log, 3)
    in_flight = log.read(0, 10_000)
    assert mgr.delete_log("orders", 0)
    assert mgr.get_log("orders", 0) is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["orders-0.abc123-delete"]
    assert in_flight.read_bytes() == b"".join(stored)
    assert mgr.run_pending_deletes(clock.now + 999) == 0
    assert mgr.run_pending_deletes(clock.now + 1_000) == 1
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    assert mgr.get_or_create_log("orders", 0).log_end_offset == 0
    assert not mgr.delete_log("nothing", 0)


def test_retention_flush_and_topic_configs_apply_to_every_log(tmp_path: Path, clock: FakeClock):
    configs = {"short": small_config(segment_bytes=300, retention_ms=1_000)}
    mgr = manager([tmp_path], clock, topic_config=configs.get)
    short = mgr.get_or_create_log("short", 0)
    kept = mgr.get_or_create_log("kept", 0)
    for log in (short, kept):
        for _ in range(9):
            log.append(make_batch(max_timestamp=clock.now, payload_size=40))
    assert mgr.flush_dirty(clock.now) == 2
    assert short.recovery_point == short.segments[-1].base_offset
    short_segments, kept_segments = len(short.segments), len(kept.segments)
    assert short_segments > 1 and kept_segments > 1
    assert mgr.run_retention(clock.now + 1_001) == short_segments - 1
    assert len(short.segments) == 1
    assert (len(kept.segments), kept.log_start_offset) == (kept_segments, 0)


def test_a_manager_that_shut_down_creates_no_more_logs(tmp_path: Path, clock: FakeClock):
    mgr = manager([tmp_path], clock)
    mgr.shutdown()
    with pytest.raises(RuntimeError):
        mgr.get_or_create_log("t", 0)


def test_the_scheduled_flush_takes_only_logs_with_rolled_segments_or_flush_ms_passed(tmp_path: Path, clock: FakeClock):
    configs = {"timed": small_config(segment_bytes=100_000, flush_ms=1_000)}
    mgr = manager([tmp_path], clock, topic_config=configs.get)
    rolled, timed, idle = mgr.get_or_create_log("rolled", 0), mgr.get_or_create_log("timed", 0), \
        mgr.get_or_create_log("idle", 0)
    for _ in range(9):
        rolled.append(make_batch(max_timestamp=clock.now, payload_size=40))
    timed.append(make_batch(max_timestamp=clock.now))
    assert len(rolled.segments) > 1
    assert [rolled.needs_scheduled_flush(clock.now), timed.needs_scheduled_flush(clock.now),
            idle.needs_scheduled_flush(clock.now)] == [True, False, False]
    assert timed.needs_scheduled_flush(clock.now + 1_000)
    assert mgr.flush_dirty(clock.now + 1_000) == 2
    assert timed.recovery_point == timed.log_end_offset
    assert not any(log.needs_scheduled_flush(clock.now + 1_000) for log in (rolled, timed, idle))
