"""preallocate: a new segment reserves segment.bytes on disk, keeps the size of its data, and gives back the rest."""

from __future__ import annotations

import os
from pathlib import Path

from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.preallocation import reserve_space
from tests.broker.storage.batch_factory import FakeClock, append_batches, read_all, small_config

SEGMENT_BYTES = 1 << 20


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def test_reserving_allocates_blocks_but_keeps_the_files_size(tmp_path: Path) -> None:
    path = tmp_path / "reserved"
    with open(path, "wb") as f:
        assert reserve_space(f.fileno(), SEGMENT_BYTES)
    assert os.stat(path).st_size == 0
    assert allocated(path) >= SEGMENT_BYTES


def test_a_preallocated_log_reserves_its_active_segment_and_trims_rolled_ones(log_dir: Path, clock: FakeClock) -> None:
    log = LocalLog.open(log_dir, small_config(segment_bytes=SEGMENT_BYTES, preallocate=True), clock=clock)
    stored = append_batches(log, 3)
    first = log.segments[0]
    assert os.stat(first.path).st_size == first.size  # readers and recovery see only the data
    assert allocated(first.path) >= SEGMENT_BYTES
    log.roll()
    assert allocated(first.path) < SEGMENT_BYTES
    assert allocated(log.segments[-1].path) >= SEGMENT_BYTES
    log.close()
    assert all(allocated(s.path) < SEGMENT_BYTES for s in log.segments)
    reopened = LocalLog.open(log_dir, small_config(segment_bytes=SEGMENT_BYTES), clock=clock)
    assert read_all(reopened) == b"".join(stored)


def test_without_preallocate_a_segment_grows_as_written(log_dir: Path, clock: FakeClock) -> None:
    log = LocalLog.open(log_dir, small_config(segment_bytes=SEGMENT_BYTES), clock=clock)
    append_batches(log, 1)
    assert allocated(log.segments[0].path) < SEGMENT_BYTES


def test_preallocate_comes_from_the_topic_config() -> None:
    assert LogConfig.from_topic_configs({"preallocate": "true"}).preallocate is True
    assert LogConfig().preallocate is False
