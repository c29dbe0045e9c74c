"""Start-up: every log dir is checked and every partition directory in it opened, on a pool of threads per
dir; a clean start reads no segment file."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from broker_core.storage import loader
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import CorruptCheckpointError, LogDirError
from broker_core.storage.files import TopicPartition
from broker_core.storage.log_manager import LogManager
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.unified_log import UnifiedLog
from spate.records import Record, build_batch
from tests.broker.storage.batch_factory import FakeClock, append_batches, make_batch, read_all, small_config
from tests.broker.storage.loader.test_clean_open import SEGMENT_SUFFIXES, files_opened

CONFIG = small_config(segment_bytes=500)
PARTITIONS = 12


def manager(dirs: list[Path], clock: FakeClock, **kwargs) -> LogManager:
    return LogManager(dirs, CONFIG, clock=clock, **kwargs)


def filled(tmp_path: Path, clock: FakeClock) -> tuple[LogManager, dict[int, list[bytes]]]:
    mgr = manager([tmp_path], clock)
    stored = {p: append_batches(mgr.get_or_create_log("orders", p), 3 + p % 4) for p in range(PARTITIONS)}
    return mgr, stored


def test_partition_dirs_scheduled_for_deletion_before_a_restart_are_removed(tmp_path: Path, clock: FakeClock):
    stale = tmp_path / "orders-0.0123abcd-delete"
    stale.mkdir()
    (stale / "00000000000000000000.log").write_bytes(b"")
    mgr = manager([tmp_path], clock)
    assert not stale.exists()
    assert mgr.all_logs() == {}


def test_directories_with_weird_topic_names_load_as_their_partitions(tmp_path: Path, clock: FakeClock):
    for name in ["a-b-c-3", "x.y_z-0", "__consumer_offsets-49", "t-0-1"]:
        (tmp_path / name).mkdir()
    (tmp_path / "lost+found").mkdir()
    mgr = manager([tmp_path], clock)
    assert set(mgr.all_logs()) == {
        TopicPartition("a-b-c", 3),
        TopicPartition("x.y_z", 0),
        TopicPartition("__consumer_offsets", 49),
        TopicPartition("t-0", 1),
    }


def test_a_log_dir_that_is_a_file_is_a_log_dir_error(tmp_path: Path, clock: FakeClock):
    path = tmp_path / "not-a-dir"
    path.write_text("")
    with pytest.raises(LogDirError, match="not a directory") as caught:
        manager([path], clock)
    assert caught.value.path == path


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to any directory")
def test_a_read_only_log_dir_is_a_log_dir_error(tmp_path: Path, clock: FakeClock):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(LogDirError, match="not writable"):
            manager([tmp_path], clock)
    finally:
        tmp_path.chmod(0o700)


def test_an_unparsable_checkpoint_names_the_file(tmp_path: Path, clock: FakeClock):
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\norders zero 5\n")
    with pytest.raises(CorruptCheckpointError, match="recovery-point-offset-checkpoint"):
        manager([tmp_path], clock)


def test_the_same_partition_in_two_log_dirs_is_refused(tmp_path: Path, clock: FakeClock):
    (tmp_path / "d1" / "orders-0").mkdir(parents=True)
    (tmp_path / "d2" / "orders-0").mkdir(parents=True)
    with pytest.raises(LogDirError, match="orders-0"):
        manager([tmp_path / "d1", tmp_path / "d2"], clock)


def test_logs_load_on_the_recovery_threads_of_their_dir(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    mgr, stored = filled(tmp_path, clock)
    mgr.shutdown()
    threads: set[str] = set()
    real_load = loader.load_log

    def spy(*args, **kwargs):
        threads.add(threading.current_thread().name)
        return real_load(*args, **kwargs)

    monkeypatch.setattr("broker_core.storage.local_log.load_log", spy)
    restarted = manager([tmp_path], clock, recovery_threads_per_dir=3)
    assert len(threads) > 1 and all(name.startswith(f"log-dir-{tmp_path.name}") for name in threads)
    assert sorted(tp.partition for tp in restarted.all_logs()) == list(range(PARTITIONS))
    for p, batches in stored.items():
        assert read_all(restarted.get_log("orders", p)) == b"".join(batches)


def test_a_clean_start_reads_no_segment_file_and_takes_each_log_end_from_the_checkpoint(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    mgr, stored = filled(tmp_path, clock)
    ends = {p: mgr.get_log("orders", p).log_end_offset for p in stored}
    mgr.shutdown()
    with files_opened(monkeypatch) as opened:
        restarted = manager([tmp_path], clock, recovery_threads_per_dir=2)
    assert [name for name in opened if name.endswith(SEGMENT_SUFFIXES)] == []
    assert restarted.open_files.open_descriptors == 0
    assert {p: restarted.get_log("orders", p).log_end_offset for p in stored} == ends


def test_a_crash_start_recovers_every_torn_log_and_gives_back_its_descriptors(tmp_path: Path, clock: FakeClock):
    mgr, stored = filled(tmp_path, clock)
    mgr.checkpoint()
    for p in range(0, PARTITIONS, 2):
        log = mgr.get_log("orders", p)
        active = log.directory / f"{log.segments[-1].base_offset:020d}.log"
        with open(active, "ab") as f:
            f.write(make_batch()[:40])  # torn writes in half the partitions, then the process dies
    restarted = manager([tmp_path], clock, recovery_threads_per_dir=2, max_open_files=16)
    for p, batches in stored.items():
        log = restarted.get_log("orders", p)
        assert read_all(log) == b"".join(batches)
        assert log.log_end_offset == 2 * len(batches)
    assert restarted.open_files.open_descriptors <= 16


def test_a_dir_without_the_marker_is_recovered_even_if_its_checkpoint_names_the_log_end(
    tmp_path: Path, clock: FakeClock
):
    mgr, stored = filled(tmp_path, clock)
    mgr.shutdown()
    (tmp_path / ".kafka_cleanshutdown").unlink()
    log = mgr.get_log("orders", 1)
    active = tmp_path / "orders-1" / f"{log.segments[-1].base_offset:020d}.log"
    with open(active, "ab") as f:
        f.write(b"\x00" * 30)
    restarted = manager([tmp_path], clock)
    assert restarted.get_log("orders", 1).log_end_offset == log.log_end_offset
    assert active.stat().st_size == restarted.get_log("orders", 1).segments[-1].size


def test_a_partition_opens_its_producer_state_and_epochs_from_what_loading_read(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    mgr = manager([tmp_path], clock)
    record = [Record(offset=0, timestamp=1_000, key=None, value=b"v")]
    log = UnifiedLog(mgr.get_or_create_log("orders", 0), clock=clock, producer_id_expiration_ms=86_400_000)
    log.append_as_leader(build_batch(record, producer_id=7, producer_epoch=0, base_sequence=0), leader_epoch=4)
    mgr.shutdown({log.local_log.topic_partition: log.checkpoint})

    restarted = manager([tmp_path], clock)
    with files_opened(monkeypatch) as opened:
        reopened = UnifiedLog(restarted.get_log("orders", 0), clock=clock, producer_id_expiration_ms=86_400_000)
    assert opened == []
    assert [(e.epoch, e.start_offset) for e in reopened.epoch_cache.entries] == [(4, 0)]
    retry = build_batch(record, producer_id=7, producer_epoch=0, base_sequence=0)
    assert reopened.append_as_leader(retry, leader_epoch=4).duplicate


def test_the_open_file_cache_evicts_down_to_its_capacity_when_eviction_resumes(tmp_path: Path):
    cache = OpenFileCache(16)
    cache.stop_evicting()

    class Holder:
        closed = False

        def close_idle(self) -> None:
            self.closed = True

    holders = [Holder() for _ in range(20)]
    for holder in holders:
        cache.touch(holder, 1)
    assert cache.open_descriptors == 20
    cache.resume_evicting()
    assert cache.open_descriptors == 16
    assert [h.closed for h in holders] == [True] * 4 + [False] * 16


def test_a_topic_config_is_merged_once_per_topic_at_start_up(tmp_path: Path, clock: FakeClock):
    mgr, _ = filled(tmp_path, clock)
    mgr.shutdown()
    asked: list[str] = []

    def topic_config(topic: str) -> LogConfig:
        asked.append(topic)
        return small_config(segment_bytes=700)

    restarted = manager([tmp_path], clock, topic_config=topic_config)
    assert asked == ["orders"]
    assert restarted.get_log("orders", 3).config.segment_bytes == 700
