"""ListOffsets v0's offsets: segment base offsets by file modification time, newest first."""

from __future__ import annotations

import os
from pathlib import Path

from broker_core.storage.legacy_offsets import EARLIEST, LATEST, capped_at, offsets_before
from broker_core.storage.segment import SegmentInfo

NOW = 10_000_000


def _segments(tmp_path: Path, bases_and_mtimes: list[tuple[int, int]], active_size: int = 100) -> list[SegmentInfo]:
    segments = []
    for i, (base, mtime_ms) in enumerate(bases_and_mtimes):
        path = tmp_path / f"{base:020d}.log"
        path.write_bytes(b"")
        os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
        size = active_size if i == len(bases_and_mtimes) - 1 else 1000
        segments.append(SegmentInfo(base, base + 10, size, -1, path))
    return segments


def test_latest_starts_from_the_log_end_when_the_active_segment_holds_data(tmp_path: Path) -> None:
    segments = _segments(tmp_path, [(0, 1000), (10, 2000), (20, 3000)])
    assert offsets_before(segments, 0, 25, LATEST, 1, NOW) == [25]
    assert offsets_before(segments, 0, 25, LATEST, 10, NOW) == [25, 20, 10, 0]


def test_an_empty_active_segment_adds_no_log_end_entry(tmp_path: Path) -> None:
    segments = _segments(tmp_path, [(0, 1000), (10, 2000)], active_size=0)
    assert offsets_before(segments, 0, 10, LATEST, 10, NOW) == [10, 0]


def test_earliest_is_the_first_segment_raised_to_the_log_start(tmp_path: Path) -> None:
    segments = _segments(tmp_path, [(0, 1000), (10, 2000)])
    assert offsets_before(segments, 0, 15, EARLIEST, 10, NOW) == [0]
    assert offsets_before(segments, 4, 15, EARLIEST, 10, NOW) == [4]


def test_a_time_starts_from_the_newest_segment_modified_at_or_before_it(tmp_path: Path) -> None:
    segments = _segments(tmp_path, [(0, 1000), (10, 2000), (20, 3000)])
    assert offsets_before(segments, 0, 25, 2500, 10, NOW) == [10, 0]
    assert offsets_before(segments, 0, 25, 2000, 1, NOW) == [10]
    assert offsets_before(segments, 0, 25, 999, 10, NOW) == []
    assert offsets_before(segments, 0, 25, NOW, 10, NOW) == [25, 20, 10, 0]


def test_no_segments_no_offsets() -> None:
    assert offsets_before([], 0, 0, LATEST, 5, NOW) == []
    assert offsets_before([], 0, 0, EARLIEST, 5, NOW) == []


def test_a_consumer_sees_the_high_watermark_in_place_of_offsets_above_it() -> None:
    assert capped_at([25, 20, 10, 0], 22) == [22, 20, 10, 0]
    assert capped_at([25, 20, 10, 0], 25) == [25, 20, 10, 0]
    assert capped_at([25], 5) == [5]
