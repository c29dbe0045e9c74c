"""When the leader-epoch checkpoint is fsynced: truncations at once, new entries before the log's next flush."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker_core.storage import fs
from broker_core.storage.epoch_cache import EpochEntry, LeaderEpochFileCache, read_checkpoint
from broker_core.storage.files import LEADER_EPOCH_CHECKPOINT
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from tests.broker.storage.batch_factory import FakeClock, make_batch, small_config


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every fsync made through fs.py (checkpoints, directories), by descriptor."""
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(fs.os, "fsync", fsync)
    return calls


def test_a_new_entry_is_written_at_once_but_not_fsynced(tmp_path: Path, fsyncs: list[int]) -> None:
    cache = LeaderEpochFileCache(tmp_path)
    assert cache.assign(0, 0)
    assert read_checkpoint(tmp_path / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(0, 0)]
    assert fsyncs == []
    assert cache.unsynced


def test_sync_fsyncs_the_checkpoint_and_its_directory_once(tmp_path: Path, fsyncs: list[int]) -> None:
    cache = LeaderEpochFileCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(1, 5)
    cache.sync()
    assert len(fsyncs) == 2  # the file, then the directory
    assert not cache.unsynced
    cache.sync()
    assert len(fsyncs) == 2


@pytest.mark.parametrize("truncate", [
    lambda cache: cache.truncate_from_end(5),
    lambda cache: cache.truncate_from_start(7),
    lambda cache: cache.clear_and_flush(),
], ids=["from_end", "from_start", "clear"])
def test_truncations_are_durable_at_once(tmp_path: Path, fsyncs: list[int], truncate) -> None:
    cache = LeaderEpochFileCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(1, 5)
    truncate(cache)
    assert len(fsyncs) == 2
    assert not cache.unsynced


def test_a_log_flush_syncs_the_epoch_checkpoint_before_the_data(tmp_path: Path, fsyncs: list[int]) -> None:
    clock = FakeClock()
    log = UnifiedLog(LocalLog.open(tmp_path / "t-0", small_config(), clock=clock), clock=clock,
                     producer_id_expiration_ms=86_400_000)
    log.maybe_assign_epoch_start_offset(3, 0)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=3)
    assert log.epoch_cache.unsynced
    log.flush()
    assert not log.epoch_cache.unsynced
    assert log.local_log.recovery_point == 2
    log.close()


def test_an_entry_assigned_without_write_waits_for_the_next_assign(tmp_path: Path, fsyncs: list[int]) -> None:
    cache = LeaderEpochFileCache(tmp_path)
    assert cache.assign(0, 0, write=False)
    assert not (tmp_path / LEADER_EPOCH_CHECKPOINT).exists()
    assert cache.unsynced
    assert not cache.assign(0, 0)  # nothing changes, but the entry is written now
    assert read_checkpoint(tmp_path / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(0, 0)]
    assert fsyncs == []


def test_sync_writes_an_unwritten_entry_durably(tmp_path: Path, fsyncs: list[int]) -> None:
    cache = LeaderEpochFileCache(tmp_path)
    cache.assign(2, 0, write=False)
    cache.sync()
    assert read_checkpoint(tmp_path / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(2, 0)]
    assert len(fsyncs) == 2 and not cache.unsynced


def new_unified_log(directory: Path, clock: FakeClock) -> UnifiedLog:
    return UnifiedLog(LocalLog.open(directory, small_config(), clock=clock), clock=clock,
                      producer_id_expiration_ms=86_400_000)


def test_an_appended_epoch_is_written_with_the_next_flush_not_on_the_produce_path(tmp_path: Path) -> None:
    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.maybe_assign_epoch_start_offset(0, 0)
    assert not (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).exists()
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=0)
    assert not (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).exists()
    assert log.epoch_cache.entries == (EpochEntry(0, 0),)
    log.flush()
    assert read_checkpoint(tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(0, 0)]
    log.maybe_assign_epoch_start_offset(1, 2)  # the log holds data now: written at once
    assert read_checkpoint(tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(0, 0), EpochEntry(1, 2)]
    log.close()


def test_epochs_of_appends_never_written_come_back_from_the_batches_after_a_crash(tmp_path: Path) -> None:
    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=3)
    log.append_as_leader(make_batch(records=1, max_timestamp=clock.now), leader_epoch=5)
    # A crash: no flush, no close.
    reopened = new_unified_log(tmp_path / "t-0", clock)
    assert reopened.epoch_cache.entries == (EpochEntry(3, 0), EpochEntry(5, 2))
    assert reopened.end_offset_for_epoch(3) == (3, 2)
    reopened.close()


def test_a_leader_epoch_never_written_is_assigned_again_after_a_restart(tmp_path: Path) -> None:
    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.maybe_assign_epoch_start_offset(0, 0)
    log.checkpoint()
    log.close()
    reopened = new_unified_log(tmp_path / "t-0", clock)
    assert reopened.epoch_cache.entries == ()
    reopened.maybe_assign_epoch_start_offset(0, 0)
    assert reopened.end_offset_for_epoch(0) == (0, 0)
    reopened.close()


def test_epochs_of_unflushed_batches_are_restored_when_the_checkpoint_lost_them(tmp_path: Path) -> None:
    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.maybe_assign_epoch_start_offset(3, 0)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=3)
    log.maybe_assign_epoch_start_offset(4, 2)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=4)
    # A power failure kept the unflushed batches but not the checkpoint written after them.
    (tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT).write_text("0\n1\n3 0\n")
    reopened = UnifiedLog(LocalLog.open(tmp_path / "t-0", small_config(), clock=clock, recovery_point=0),
                          clock=clock, producer_id_expiration_ms=86_400_000)
    assert reopened.epoch_cache.entries == (EpochEntry(3, 0), EpochEntry(4, 2))
    reopened.close()


def test_restoring_epochs_never_drops_a_later_entry_without_data(tmp_path: Path) -> None:
    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.maybe_assign_epoch_start_offset(3, 0)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=3)
    log.maybe_assign_epoch_start_offset(5, 2)  # a new leader that wrote nothing yet
    reopened = UnifiedLog(LocalLog.open(tmp_path / "t-0", small_config(), clock=clock, recovery_point=0),
                          clock=clock, producer_id_expiration_ms=86_400_000)
    assert reopened.epoch_cache.entries == (EpochEntry(3, 0), EpochEntry(5, 2))
    reopened.close()


def test_a_checkpoint_fsyncs_the_partition_directory_once_and_an_unchanged_log_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stat

    clock = FakeClock()
    log = new_unified_log(tmp_path / "t-0", clock)
    log.append_as_leader(make_batch(records=2, max_timestamp=clock.now), leader_epoch=0)
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    log.checkpoint()
    assert synced.count("dir") == 1  # the snapshot's, the epoch checkpoint's and the segment's entries at once
    assert read_checkpoint(tmp_path / "t-0" / LEADER_EPOCH_CHECKPOINT) == [EpochEntry(0, 0)]
    assert (tmp_path / "t-0" / "00000000000000000002.snapshot").exists()
    synced.clear()
    log.checkpoint()
    assert synced == []
    log.close()
