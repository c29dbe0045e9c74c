"""After a crash only segments from the recovery point on are re-validated; older ones are trusted."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from broker_core.storage.file_records import FileRecords
from broker_core.storage.local_log import LocalLog
from broker_core.storage.segment import LogSegment
from tests.broker.storage.batch_factory import FakeClock, append_batches, read_all, small_config

CONFIG = small_config(segment_bytes=600, index_interval_bytes=100)


def crashed_log(directory: Path, clock: FakeClock) -> tuple[LocalLog, bytes]:
    """A log of several flushed segments and an unflushed tail, left without closing (a crash)."""
    log = LocalLog.open(directory, CONFIG, clock=clock)
    data = b"".join(append_batches(log, 30, clock=clock))
    log.flush()
    data += b"".join(append_batches(log, 4, clock=clock))
    return log, data


def recovered_and_walked(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    recovered: list[int] = []
    walked: list[int] = []
    real_recover = LogSegment.recover
    real_walk = FileRecords.valid_batch_at

    def recording_recover(self: LogSegment, **kwargs: object) -> int:
        recovered.append(self.base_offset)
        return real_recover(self, **kwargs)  # type: ignore[arg-type]

    def recording_walk(self: FileRecords, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        walked.append(int(self.path.name.split(".")[0]))
        return real_walk(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(LogSegment, "recover", recording_recover)
    monkeypatch.setattr(FileRecords, "valid_batch_at", recording_walk)
    return recovered, walked


def test_segments_below_the_recovery_point_are_not_rescanned(
    log_dir: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed, data = crashed_log(log_dir, clock)
    recovery_point = crashed.recovery_point
    recovered, walked = recovered_and_walked(monkeypatch)
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=recovery_point)
    bases = sorted(int(p.name.split(".")[0]) for p in log_dir.glob("*.log"))
    holding_point = max(b for b in bases if b <= recovery_point)
    assert len(bases) >= 4
    assert recovered == [b for b in bases if b >= holding_point]
    assert set(walked) <= set(recovered)
    assert read_all(reopened) == data


def test_a_corrupt_tail_after_the_recovery_point_is_still_truncated(log_dir: Path, clock: FakeClock) -> None:
    crashed, data = crashed_log(log_dir, clock)
    recovery_point = crashed.recovery_point
    last = sorted(log_dir.glob("*.log"))[-1]
    with open(last, "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x00\x99\x00\x00\x01\x00torn")
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=recovery_point)
    assert read_all(reopened) == data
    assert reopened.log_end_offset == crashed.log_end_offset


def test_a_crashed_active_segment_with_a_preallocated_index_is_rebuilt_and_reads_back_whole(
    log_dir: Path, clock: FakeClock
) -> None:
    config = small_config(segment_bytes=1 << 20, index_interval_bytes=100, segment_index_bytes=64 << 20)
    log = LocalLog.open(log_dir, config, clock=clock)
    data = b"".join(append_batches(log, 20, clock=clock))
    index = next(log_dir.glob("*.index"))
    assert index.stat().st_size == 64 << 20  # preallocated, the tail sparse zeros
    reopened = LocalLog.open(log_dir, config, clock=clock, recovery_point=0)
    assert read_all(reopened) == data
    assert reopened.read(10, 1).first_offset <= 10


def test_recovery_fsyncs_nothing_and_leaves_the_recovered_data_above_the_recovery_point(
    log_dir: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    crashed, data = crashed_log(log_dir, clock)
    recovery_point = crashed.recovery_point
    last = sorted(log_dir.glob("*.log"))[-1]
    with open(last, "ab") as f:
        f.write(b"\x00torn")  # recovery cuts this off
    fsynced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        fsynced.append("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=recovery_point)
    assert fsynced == []
    assert read_all(reopened) == data
    assert reopened.recovery_point == recovery_point
    assert reopened.unflushed_messages == reopened.log_end_offset - recovery_point

    reopened.flush()
    assert reopened.recovery_point == reopened.log_end_offset
    assert "directory" in fsynced  # the cut is durable with the data
    reopened.close()


def test_after_a_clean_shutdown_the_recovery_point_is_the_log_end(log_dir: Path, clock: FakeClock) -> None:
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    append_batches(log, 10, clock=clock)
    log.flush()
    end = log.log_end_offset
    log.close()
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=0, had_clean_shutdown=True)
    assert reopened.recovery_point == end
    reopened.close()


def test_after_a_clean_shutdown_no_segment_is_recovered_or_walked(
    log_dir: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    data = b"".join(append_batches(log, 30, clock=clock))
    log.flush()
    log.close()
    recovered, walked = recovered_and_walked(monkeypatch)
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=0, had_clean_shutdown=True)
    assert len(list(log_dir.glob("*.log"))) >= 4
    assert recovered == [] and walked == []
    monkeypatch.undo()
    assert read_all(reopened) == data
    reopened.close()
