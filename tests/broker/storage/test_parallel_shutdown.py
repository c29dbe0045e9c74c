"""Clean shutdown closes the logs of each log dir on a pool of threads, then marks the dir clean."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import TopicPartition
from broker_core.storage.log_dir_jobs import run_per_log_dir
from broker_core.storage.log_manager import LogManager
from broker_core.storage.open_files import OpenFileCache
from tests.broker.storage.batch_factory import FakeClock, append_batches, read_all, small_config

CONFIG = small_config(segment_bytes=500)


def manager(dirs: list[Path], clock: FakeClock, **kwargs) -> LogManager:
    return LogManager(dirs, CONFIG, clock=clock, **kwargs)


# ------------------------------------------------------------------ run_per_log_dir


def test_each_log_dir_runs_its_jobs_on_as_many_threads_as_asked(tmp_path: Path):
    running: dict[Path, int] = {}
    most: dict[Path, int] = {}
    lock = threading.Lock()

    def job(log_dir: Path):
        def run() -> None:
            with lock:
                running[log_dir] = running.get(log_dir, 0) + 1
                most[log_dir] = max(most.get(log_dir, 0), running[log_dir])
            time.sleep(0.02)
            with lock:
                running[log_dir] -= 1
        return run

    dirs = [tmp_path / "d1", tmp_path / "d2"]
    errors = run_per_log_dir({d: [job(d) for _ in range(8)] for d in dirs}, threads_per_dir=3)
    assert errors == {dirs[0]: [], dirs[1]: []}
    assert most == {dirs[0]: 3, dirs[1]: 3}


def test_a_failing_job_is_returned_with_its_dir_and_the_others_still_run(tmp_path: Path):
    done = []

    def fail() -> None:
        raise OSError("disk gone")

    dirs = [tmp_path / "d1", tmp_path / "d2"]
    errors = run_per_log_dir(
        {dirs[0]: [fail, lambda: done.append(1)], dirs[1]: [lambda: done.append(2)]}, threads_per_dir=1
    )
    assert [str(e) for e in errors[dirs[0]]] == ["disk gone"]
    assert errors[dirs[1]] == []
    assert sorted(done) == [1, 2]


def test_fewer_than_one_thread_per_dir_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="at least 1"):
        run_per_log_dir({tmp_path: []}, threads_per_dir=0)


# ------------------------------------------------------------- LogManager.shutdown


def test_shutdown_with_several_threads_keeps_every_log_whole_and_marks_each_dir_clean(tmp_path: Path):
    clock = FakeClock()
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    first = manager(dirs, clock, recovery_threads_per_dir=4, max_open_files=16)
    stored = {}
    for partition in range(40):
        stored[partition] = append_batches(first.get_or_create_log("orders", partition), 5)
    first.shutdown()
    for d in dirs:
        assert (d / ".kafka_cleanshutdown").exists()
        points = OffsetCheckpointFile(d / "recovery-point-offset-checkpoint").read()
        assert len(points) == 20 and set(points.values()) == {10}

    second = manager(dirs, clock)
    for partition in range(40):
        log = second.get_log("orders", partition)
        assert log.recovery_point == log.log_end_offset == 10
        assert read_all(log) == b"".join(stored[partition])


def test_each_log_runs_its_checkpoint_before_it_is_closed(tmp_path: Path):
    mgr = manager([tmp_path], FakeClock(), recovery_threads_per_dir=2)
    logs = {TopicPartition("orders", p): mgr.get_or_create_log("orders", p) for p in range(6)}
    for log in logs.values():
        append_batches(log, 2)
    seen = {}

    def checkpoint(tp: TopicPartition):
        def run() -> None:
            seen[tp] = (logs[tp].recovery_point, threading.current_thread().name)
            logs[tp].flush()
        return run

    mgr.shutdown({tp: checkpoint(tp) for tp in logs})
    assert set(seen) == set(logs)
    assert all(point == 0 for point, _ in seen.values())  # nothing flushed before its own job
    assert all(name.startswith("log-dir-") for _, name in seen.values())


def test_a_log_that_took_nothing_since_its_last_flush_is_not_fsynced_again(tmp_path: Path, monkeypatch):
    mgr = manager([tmp_path], FakeClock(), recovery_threads_per_dir=2)
    for p in range(4):
        log = mgr.get_or_create_log("orders", p)
        append_batches(log, 3)
        log.flush()
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    mgr.shutdown()
    # Only the checkpoint files and the marker: two files and their dir each, per log dir, not per log.
    assert len(synced) <= 6
    assert (tmp_path / ".kafka_cleanshutdown").exists()


def test_a_dir_whose_log_failed_to_close_gets_no_clean_marker(tmp_path: Path):
    dirs = [tmp_path / "d1", tmp_path / "d2"]
    mgr = manager(dirs, FakeClock(), recovery_threads_per_dir=2)
    bad = mgr.get_or_create_log("orders", 0)
    good = mgr.get_or_create_log("orders", 1)
    for log in (bad, good):
        append_batches(log, 2)

    def fail() -> None:
        raise RuntimeError("snapshot failed")

    mgr.shutdown({TopicPartition("orders", 0): fail})
    assert not (bad.directory.parent / ".kafka_cleanshutdown").exists()
    assert (good.directory.parent / ".kafka_cleanshutdown").exists()
    # The failed log still closed, and its data above the last flush is recovered on the next start.
    restarted = manager(dirs, FakeClock())
    assert restarted.get_log("orders", 0).log_end_offset == 4


def test_the_open_file_cache_closes_nothing_once_logs_close_on_several_threads():
    class Holder:
        closed = False

        def close_idle(self) -> None:
            self.closed = True

    cache = OpenFileCache(16)
    holders = [Holder() for _ in range(16)]
    for holder in holders:
        cache.touch(holder, 1)
    cache.stop_evicting()
    extra = Holder()
    cache.touch(extra, 2)
    assert cache.open_descriptors == 18
    assert not any(h.closed for h in holders)
    cache.forget(extra)
    assert cache.open_descriptors == 16



def test_a_dir_whose_checkpoints_cannot_be_written_at_shutdown_gets_no_clean_shutdown_marker(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    mgr = manager([tmp_path], clock)
    for p in range(12):
        append_batches(mgr.get_or_create_log("orders", p), 3 + p % 4)

    def failing_write(self, entries):
        raise LogDirError(self.path, "cannot write checkpoint: No space left on device")

    monkeypatch.setattr(OffsetCheckpointFile, "write", failing_write)
    mgr.shutdown()
    # A clean start would take each log's end from the stale checkpoint: the logs must be recovered instead.
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
