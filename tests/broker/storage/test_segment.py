"""One segment: appending, indexing, reading, truncation and renaming (loading and recovery: test_segment_recovery)."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.files import FileState
from broker_core.storage.segment import LogSegment
from spate.records.batch import iter_batches
from tests.broker.storage.batch_factory import make_batch

BASE = 100


def new_segment(directory: Path, *, interval: int = 100, max_index_size: int = 4096) -> LogSegment:
    segment = LogSegment(directory, BASE, index_interval_bytes=interval, max_index_size=max_index_size, created_ms=0)
    segment.activate()
    return segment


def append(segment: LogSegment, base_offset: int, *, records: int = 2, ts: int = 1_000, payload: int = 40) -> bytes:
    data = make_batch(base_offset=base_offset, records=records, max_timestamp=ts, payload_size=payload)
    segment.append(data, list(iter_batches(data)))
    return data


def fill(segment: LogSegment, count: int, *, records: int = 2, payload: int = 40) -> list[bytes]:
    batches = []
    offset = segment.next_offset
    for i in range(count):
        batches.append(append(segment, offset, records=records, ts=1_000 + i, payload=payload))
        offset += records
    return batches


def test_append_writes_batches_back_to_back_and_tracks_the_next_offset(tmp_path: Path):
    segment = new_segment(tmp_path)
    batches = fill(segment, 3)
    assert segment.log_path.read_bytes() == b"".join(batches)
    assert segment.next_offset == BASE + 6
    assert segment.size == sum(map(len, batches))
    assert segment.max_timestamp == 1_002
    assert segment.offset_of_max_timestamp == BASE + 4


def test_an_index_entry_is_added_once_more_than_the_interval_was_appended(tmp_path: Path):
    segment = new_segment(tmp_path, interval=200)
    batches = fill(segment, 10)  # 101 bytes each
    positions = [0]
    for batch in batches[:-1]:
        positions.append(positions[-1] + len(batch))
    # Two batches make more than 200 bytes, so every second batch gets an entry.
    entries = [segment.offset_index.entry(i) for i in range(segment.offset_index.entries)]
    assert [(e.offset, e.position) for e in entries] == [(BASE + 2 * i, positions[i]) for i in (2, 4, 6, 8)]
    assert segment.time_index.entries == 4


def test_translate_offset_finds_the_batch_holding_an_offset(tmp_path: Path):
    segment = new_segment(tmp_path, interval=0)
    fill(segment, 5, records=3)
    header = segment.translate_offset(BASE + 7)
    assert header is not None
    assert (header.base_offset, header.last_offset) == (BASE + 6, BASE + 8)
    assert segment.translate_offset(BASE + 15) is None


def test_read_returns_whole_batches_within_max_bytes(tmp_path: Path):
    segment = new_segment(tmp_path)
    batches = fill(segment, 5)
    size = len(batches[0])
    found = segment.read(BASE + 2, 2 * size + size // 2)
    assert found is not None
    assert (found.position, found.size) == (size, 2 * size)
    assert (found.first_offset, found.last_offset) == (BASE + 2, BASE + 5)


def test_read_returns_one_oversized_batch_only_when_asked(tmp_path: Path):
    segment = new_segment(tmp_path)
    batches = fill(segment, 2)
    found = segment.read(BASE, 10)
    assert found is not None and found.size == len(batches[0])
    empty = segment.read(BASE, 10, min_one_batch=False)
    assert empty is not None and empty.size == 0


def test_read_stops_before_the_first_batch_reaching_max_offset(tmp_path: Path):
    segment = new_segment(tmp_path)
    batches = fill(segment, 4)
    found = segment.read(BASE, 10_000, max_offset=BASE + 5)
    assert found is not None
    assert found.size == 2 * len(batches[0])
    assert found.last_offset == BASE + 3


def test_read_past_the_last_batch_finds_nothing(tmp_path: Path):
    segment = new_segment(tmp_path)
    fill(segment, 2)
    assert segment.read(BASE + 4, 1000) is None


def test_find_offset_by_timestamp_scans_from_the_time_index_entry(tmp_path: Path):
    segment = new_segment(tmp_path, interval=0)
    for i, ts in enumerate([10, 30, 20, 40, 50]):
        append(segment, BASE + 2 * i, ts=ts)
    assert segment.find_offset_by_timestamp(25, BASE).offset == BASE + 2
    assert segment.find_offset_by_timestamp(30, BASE).offset == BASE + 2
    assert segment.find_offset_by_timestamp(31, BASE).offset == BASE + 6
    assert segment.find_offset_by_timestamp(5, BASE + 3).offset == BASE + 3
    assert segment.find_offset_by_timestamp(51, BASE) is None


def test_truncate_to_drops_the_batch_holding_the_offset_and_everything_after(tmp_path: Path):
    segment = new_segment(tmp_path, interval=0)
    batches = fill(segment, 6, records=3)
    removed = segment.truncate_to(BASE + 10)  # inside the batch 9..11
    assert removed == 3 * len(batches[0])
    assert segment.next_offset == BASE + 9
    assert segment.log_path.read_bytes() == b"".join(batches[:3])
    assert segment.offset_index.last_entry.position < segment.size
    assert segment.max_timestamp == 1_002
    assert segment.time_index.last_entry.offset < BASE + 9


def test_on_become_inactive_records_the_largest_timestamp_and_trims(tmp_path: Path):
    segment = new_segment(tmp_path, interval=10_000)
    fill(segment, 3)
    assert segment.time_index.entries == 0
    segment.on_become_inactive()
    assert segment.time_index.last_entry.timestamp == 1_002
    assert segment.paths.time_index.stat().st_size == 12
    assert segment.paths.index.stat().st_size == 0


def test_rename_to_deleted_keeps_the_open_file_readable(tmp_path: Path):
    segment = new_segment(tmp_path)
    batches = fill(segment, 2)
    segment.rename_to(FileState.DELETED)
    assert segment.log_path.name.endswith(".log.deleted")
    assert segment.read_bytes(0, segment.size) == b"".join(batches)
    segment.delete_files()
    assert list(tmp_path.iterdir()) == []
