"""Opening a segment from disk: loading trusts its indexes, recovery re-validates its batches and rebuilds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.segment import LogSegment
from tests.broker.storage.batch_factory import make_batch
from tests.broker.storage.test_segment import BASE, fill, new_segment


def test_recover_truncates_a_torn_tail_and_rebuilds_identical_indexes(tmp_path: Path):
    segment = new_segment(tmp_path, interval=150)
    batches = fill(segment, 8)
    expected_entries = [segment.offset_index.entry(i) for i in range(segment.offset_index.entries)]
    with open(segment.log_path, "ab") as f:
        f.write(batches[0][:30])
    segment.close()
    reopened = LogSegment(tmp_path, BASE, index_interval_bytes=150, max_index_size=4096, created_ms=0)
    truncated = reopened.recover()
    assert truncated == 30
    assert reopened.next_offset == BASE + 16
    assert [reopened.offset_index.entry(i) for i in range(reopened.offset_index.entries)] == expected_entries
    assert reopened.max_timestamp == 1_007


def test_recover_stops_at_a_batch_whose_offsets_go_back(tmp_path: Path):
    segment = new_segment(tmp_path)
    fill(segment, 3)
    stale = make_batch(base_offset=BASE + 3, records=1)
    with open(segment.log_path, "ab") as f:
        f.write(stale)
    segment.close()
    reopened = LogSegment(tmp_path, BASE, index_interval_bytes=100, max_index_size=4096, created_ms=0)
    assert reopened.recover() == len(stale)
    assert reopened.next_offset == BASE + 6


def test_load_takes_the_next_offset_and_largest_timestamp_from_a_closed_segment(tmp_path: Path):
    segment = new_segment(tmp_path, interval=150)
    fill(segment, 7)
    segment.close()
    reopened = LogSegment(tmp_path, BASE, index_interval_bytes=150, max_index_size=4096, created_ms=0)
    reopened.load()
    assert reopened.next_offset == BASE + 14
    assert reopened.max_timestamp == 1_006


def test_a_missing_index_marks_the_segment_for_rebuild(tmp_path: Path):
    segment = new_segment(tmp_path)
    fill(segment, 3)
    segment.close()
    segment.paths.index.unlink()
    reopened = LogSegment(tmp_path, BASE, index_interval_bytes=100, max_index_size=4096, created_ms=0)
    assert reopened.needs_index_rebuild
    with pytest.raises(CorruptIndexError):
        reopened.load()
