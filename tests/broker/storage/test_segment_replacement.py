"""A cleaned segment takes the place of the segments it was built from, or is dropped when the log moved on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from broker_core.storage.cleaner.plan import SegmentSnapshot, StalePlanError
from broker_core.storage.cleaner.segment_cleaner import CleanedSegment, CleanerStats
from broker_core.storage.files import FileState, segment_paths
from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import FakeClock, append_batches, read_all, small_config

DELAY = 60_000


def open_log(log_dir: Path, clock: FakeClock) -> LocalLog:
    # Three 101-byte batches (6 offsets) per segment: segments start at 0, 6, 12, 18.
    return LocalLog.open(log_dir, small_config(segment_bytes=400, file_delete_delay_ms=DELAY), clock=clock)


def cleaned_keeping_first_segment(log: LocalLog, *, replaces: int, end_offset: int) -> CleanedSegment:
    """A cleaning of the first ``replaces`` segments that kept only the first segment's batches."""
    log.flush()
    snapshots = tuple(
        SegmentSnapshot(info.base_offset, info.next_offset, end, info.size, info.max_timestamp, info.path)
        for info, end in zip(log.segments, [s.base_offset for s in log.segments[1:]])
    )[:replaces]
    first = snapshots[0].base_offset
    live, cleaned = segment_paths(log.directory, first), segment_paths(log.directory, first, FileState.CLEANED)
    for source, target in zip(live.all(), cleaned.all()):
        if source.exists():
            shutil.copyfile(source, target)
    return CleanedSegment(log.directory, first, end_offset, snapshots, CleanerStats())


def names(log_dir: Path) -> list[str]:
    return sorted(p.name for p in log_dir.iterdir())


def test_a_cleaned_segment_takes_the_place_of_the_segments_it_was_built_from(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    stored = append_batches(log, 12)
    cleaned = cleaned_keeping_first_segment(log, replaces=2, end_offset=12)

    log.replace_segments(cleaned)

    assert [info.base_offset for info in log.segments] == [0, 12, 18]
    assert read_all(log) == b"".join(stored[:3] + stored[6:])
    assert log.read(6, 1).read_bytes() == stored[6]  # a read in the removed range continues at 12
    assert "00000000000000000006.log.deleted" in names(log_dir)
    assert not [n for n in names(log_dir) if n.endswith((".cleaned", ".swap")) or n == "cleaner-swap"]


def test_a_cleaning_whose_segment_left_the_log_is_refused_and_its_files_dropped(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 12)
    cleaned = cleaned_keeping_first_segment(log, replaces=2, end_offset=12)
    log.delete_records_before(6)

    with pytest.raises(StalePlanError, match="segment 0 left the log"):
        log.replace_segments(cleaned)

    assert [info.base_offset for info in log.segments] == [6, 12, 18]
    assert not [n for n in names(log_dir) if n.endswith(".cleaned")]


def test_a_cleaning_of_a_segment_truncated_since_is_refused(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    append_batches(log, 12)
    cleaned = cleaned_keeping_first_segment(log, replaces=2, end_offset=12)
    log.truncate_to(8)

    with pytest.raises(StalePlanError, match="segment 6 changed since it was cleaned"):
        log.replace_segments(cleaned)

    assert [info.base_offset for info in log.segments] == [0, 6]
    assert log.log_end_offset == 8
    assert not [n for n in names(log_dir) if n.endswith(".cleaned")]
