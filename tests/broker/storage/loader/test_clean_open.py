"""After a clean shutdown a log opens without reading its segments, and still serves as before.

The log end comes from the recovery point the shutdown checkpointed; indexes,
timestamps and each segment's end are read on first use (as Kafka's
``LazyIndex``). After a crash, everything above the recovery point is still
re-validated.
"""

from __future__ import annotations

import builtins
import io
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from broker_core.storage import file_records, index_base
from broker_core.storage.local_log import LocalLog
from broker_core.storage.open_files import OpenFileCache, SegmentFile
from tests.broker.storage.batch_factory import FakeClock, append_batches, make_batch, read_all, small_config

CONFIG = small_config(segment_bytes=1_500, index_interval_bytes=100)
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")


@contextmanager
def files_opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of every file opened meanwhile: segment files and anything opened with ``open``."""
    opened: list[str] = []

    class SpySegmentFile(SegmentFile):
        def __init__(self, path, *args, **kwargs):
            opened.append(Path(path).name)
            super().__init__(path, *args, **kwargs)

    real_open = builtins.open

    def spy_open(path, *args, **kwargs):
        if not isinstance(path, int):
            opened.append(Path(path).name)
        return real_open(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(file_records, "SegmentFile", SpySegmentFile)
        patch.setattr(index_base, "SegmentFile", SpySegmentFile)
        patch.setattr(builtins, "open", spy_open)
        patch.setattr(io, "open", spy_open)
        yield opened


def cleanly_closed_log(log_dir: Path, clock: FakeClock, batches: int = 40) -> tuple[list[bytes], int]:
    """A log of several segments, flushed and closed; its stored batches and recovery point (its end)."""
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    stored = append_batches(log, batches, records=2, clock=clock)
    log.flush()
    log.close()
    assert log.number_of_segments > 2
    return stored, log.recovery_point


def reopen_clean(log_dir: Path, clock: FakeClock, recovery_point: int | None, **kwargs) -> LocalLog:
    return LocalLog.open(
        log_dir, CONFIG, clock=clock, recovery_point=recovery_point, had_clean_shutdown=True, **kwargs
    )


def test_a_clean_reopen_reads_no_segment_file(log_dir: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch):
    _, end = cleanly_closed_log(log_dir, clock)
    cache = OpenFileCache()
    with files_opened(monkeypatch) as opened:
        log = reopen_clean(log_dir, clock, end, open_files=cache)
    assert [name for name in opened if name.endswith(SEGMENT_SUFFIXES)] == []
    assert cache.open_descriptors == 0
    assert (log.log_end_offset, log.recovery_point) == (end, end)
    log.close()

    with files_opened(monkeypatch) as opened:
        LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=0).close()  # a crash: everything re-validated
    assert {name for name in opened if name.endswith(".log")} == {p.name for p in log_dir.glob("*.log")}


def test_a_clean_reopen_without_a_usable_recovery_point_reads_the_last_segment(log_dir: Path, clock: FakeClock):
    stored, end = cleanly_closed_log(log_dir, clock)
    for recovery_point in (None, 0, end + 10**10):
        log = reopen_clean(log_dir, clock, recovery_point)
        assert log.log_end_offset == end
        assert read_all(log) == b"".join(stored)
        log.close()


def test_a_crash_after_a_clean_reopen_is_still_recovered(log_dir: Path, clock: FakeClock):
    stored, end = cleanly_closed_log(log_dir, clock)
    log = reopen_clean(log_dir, clock, end)
    more = append_batches(log, 3, records=2, clock=clock)
    active = log_dir / f"{log.segments[-1].base_offset:020d}.log"
    with open(active, "ab") as f:
        f.write(make_batch()[:30])  # torn tail, then the process dies
    recovered = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=end)
    assert recovered.log_end_offset == end + 6
    assert read_all(recovered) == b"".join(stored + more)
    assert active.stat().st_size == recovered.segments[-1].size


def test_crash_recovery_rebuilds_the_active_indexes_in_place_without_cutting_them(
    log_dir: Path, clock: FakeClock
):
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    stored = append_batches(log, 5, records=2, clock=clock)
    log.flush()  # the active segment's indexes are preallocated on disk; then the process dies
    index = log_dir / f"{log.segments[-1].base_offset:020d}.index"
    preallocated = index.stat().st_size
    assert preallocated == CONFIG.segment_index_bytes - CONFIG.segment_index_bytes % 8
    recovered = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=0)
    assert index.stat().st_size == preallocated
    assert read_all(recovered) == b"".join(stored)
    assert recovered.read(5, 1).read_bytes() == stored[2]
    recovered.close()
    assert index.stat().st_size < preallocated  # trimmed to its entries on close, as always
