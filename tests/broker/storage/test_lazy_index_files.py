"""Index files are created on first use, so a new, empty log costs one file (its ``.log``)."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.index_base import PENDING_ENTRIES
from broker_core.storage.offset_index import OffsetIndex
from broker_core.storage.segment import LogSegment
from broker_core.storage.time_index import TimeIndex
from tests.broker.storage.test_segment import BASE, append, fill, new_segment

MAX_SIZE = 8 * 64


def test_a_new_index_creates_no_file_even_when_active(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.activate()
    assert not index.exists and not (tmp_path / "i.index").exists()
    assert index.entries == 0 and index.lookup(BASE + 5).offset == BASE


def test_the_first_entries_wait_in_memory_and_a_flush_writes_them_to_a_preallocated_file(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.activate()
    index.append(BASE + 5, 4200)
    assert not (tmp_path / "i.index").exists()  # no file creation on the append path
    assert index.entries == 1 and index.lookup(BASE + 6).position == 4200
    index.flush()
    assert (tmp_path / "i.index").stat().st_size == MAX_SIZE
    index.close()
    assert (tmp_path / "i.index").stat().st_size == 8
    assert OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE).entries == 1


def test_pending_entries_are_written_once_enough_of_them_wait(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, 8 * 1024)
    index.activate()
    for n in range(PENDING_ENTRIES - 1):
        index.append(BASE + n + 1, 10 * (n + 1))
    assert not (tmp_path / "i.index").exists()
    index.append(BASE + PENDING_ENTRIES, 10 * PENDING_ENTRIES)
    assert (tmp_path / "i.index").stat().st_size == 8 * 1024
    reopened = OffsetIndex(tmp_path / "i.index", BASE, 8 * 1024)  # what a crash now would find
    assert reopened.entries == PENDING_ENTRIES
    index.close()


def test_closing_an_index_writes_its_pending_entries(tmp_path: Path):
    index = TimeIndex(tmp_path / "t.timeindex", BASE, 12 * 8)
    index.activate()
    index.maybe_append(1_000, BASE + 1)
    index.maybe_append(2_000, BASE + 3)
    index.close()
    reopened = TimeIndex(tmp_path / "t.timeindex", BASE, 12 * 8)
    assert reopened.entries == 2 and reopened.lookup(1_500).offset == BASE + 1


def test_truncation_drops_pending_entries_too(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.activate()
    for n in range(1, 5):
        index.append(BASE + n, 10 * n)
    index.truncate_to_position(30)
    assert index.entries == 2 and index.lookup(BASE + 10).offset == BASE + 2
    index.close()
    assert OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE).entries == 2


def test_trimming_or_closing_an_index_without_entries_creates_nothing(tmp_path: Path):
    index = TimeIndex(tmp_path / "t.timeindex", BASE, 12 * 8)
    index.activate()
    index.trim()
    index.close()
    assert not (tmp_path / "t.timeindex").exists()


def test_create_if_missing_leaves_an_empty_file_that_reopens_empty(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.create_if_missing()
    index.close()
    assert (tmp_path / "i.index").stat().st_size == 0
    assert OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE).entries == 0


def test_renaming_an_index_not_yet_created_moves_where_it_will_be_created(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.activate()
    index.rename(tmp_path / "i.index.deleted")
    index.append(BASE + 1, 10)
    index.flush()
    assert (tmp_path / "i.index.deleted").exists() and not (tmp_path / "i.index").exists()


def test_a_new_segment_creates_only_its_log_file(tmp_path: Path):
    segment = new_segment(tmp_path)
    segment.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000100.log"]


def test_a_closed_segment_holding_data_keeps_index_files_and_is_trusted_on_reopen(tmp_path: Path):
    segment = new_segment(tmp_path, interval=1_000_000)  # too few bytes for an offset index entry
    append(segment, BASE)
    segment.close()
    assert (tmp_path / "00000000000000000100.index").stat().st_size == 0
    assert (tmp_path / "00000000000000000100.timeindex").stat().st_size == 12
    reopened = LogSegment(tmp_path, BASE, index_interval_bytes=1_000_000, max_index_size=4096, created_ms=0)
    assert not reopened.needs_index_rebuild
    reopened.load()
    assert reopened.next_offset == BASE + 2
    reopened.close()


def test_an_active_segment_with_entries_has_preallocated_index_files(tmp_path: Path):
    segment = new_segment(tmp_path, interval=50)
    fill(segment, 3)
    segment.flush()
    assert (tmp_path / "00000000000000000100.index").stat().st_size == 4096
    segment.close()


def test_activating_a_trimmed_index_leaves_its_size_until_the_next_entry(tmp_path: Path):
    index = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    index.activate()
    index.append(BASE + 1, 10)
    index.close()
    reopened = OffsetIndex(tmp_path / "i.index", BASE, MAX_SIZE)
    reopened.activate()  # a restart makes the last segment active again: no write yet
    assert (tmp_path / "i.index").stat().st_size == 8
    reopened.append(BASE + 2, 20)
    reopened.flush()
    assert (tmp_path / "i.index").stat().st_size == MAX_SIZE
    assert reopened.entries == 2
    reopened.close()
