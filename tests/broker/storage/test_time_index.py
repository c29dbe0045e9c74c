"""The sparse time index: layout, lookups, the reserved final slot, crash checks."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.time_index import TimeIndex, TimestampOffset

BASE = 500


def active_index(path: Path, max_size: int = 12 * 32) -> TimeIndex:
    index = TimeIndex(path, BASE, max_size)
    index.activate()
    return index


def test_entries_are_timestamp_int64_and_relative_offset_int32(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex")
    index.maybe_append(1_700_000_000_000, BASE + 7)
    index.close()
    assert (tmp_path / "t.timeindex").read_bytes() == struct.pack(">qi", 1_700_000_000_000, 7)


def test_lookup_on_an_empty_index_returns_no_timestamp_at_the_base(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex")
    assert index.lookup(10**12) == TimestampOffset(-1, BASE)


def test_lookup_returns_greatest_entry_at_or_below_the_timestamp(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex")
    for ts, offset in [(100, BASE + 1), (200, BASE + 5), (300, BASE + 9)]:
        assert index.maybe_append(ts, offset)
    assert index.lookup(200) == TimestampOffset(200, BASE + 5)
    assert index.lookup(250) == TimestampOffset(200, BASE + 5)
    assert index.lookup(10_000) == TimestampOffset(300, BASE + 9)
    assert index.lookup(99) == TimestampOffset(-1, BASE)


def test_only_increasing_timestamps_are_appended(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex")
    assert index.maybe_append(100, BASE + 1)
    assert not index.maybe_append(100, BASE + 2)
    assert not index.maybe_append(50, BASE + 3)
    assert index.entries == 1
    with pytest.raises(ValueError):
        index.maybe_append(150, BASE)


def test_the_last_slot_is_reserved_for_the_final_entry(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex", max_size=12 * 3)
    index.maybe_append(1, BASE + 1)
    index.maybe_append(2, BASE + 2)
    assert index.is_full
    with pytest.raises(ValueError):
        index.maybe_append(3, BASE + 3)
    assert index.maybe_append(3, BASE + 3, final=True)
    assert index.last_entry == TimestampOffset(3, BASE + 3)


def test_truncate_to_drops_entries_at_or_after_the_offset(tmp_path: Path):
    index = active_index(tmp_path / "t.timeindex")
    for ts, offset in [(100, BASE + 1), (200, BASE + 5), (300, BASE + 9)]:
        index.maybe_append(ts, offset)
    index.truncate_to(BASE + 5)
    assert index.entries == 1
    assert index.last_entry == TimestampOffset(100, BASE + 1)


@pytest.mark.parametrize(
    "entries, next_offset, problem",
    [
        ([(100, 1), (100, 2)], 10, "timestamp"),
        ([(100, 1), (90, 2)], 10, "timestamp"),
        ([(100, 3), (200, 2)], 10, "goes back"),
        ([(100, 3), (200, 12)], BASE + 10, "past the log"),
    ],
)
def test_sanity_check_rejects_unordered_entries_or_entries_past_the_end(tmp_path: Path, entries, next_offset, problem):
    path = tmp_path / "t.timeindex"
    path.write_bytes(b"".join(struct.pack(">qi", *entry) for entry in entries))
    index = TimeIndex(path, BASE, 1024)
    with pytest.raises(CorruptIndexError, match=problem):
        index.sanity_check(max(next_offset, BASE + 10) if problem != "past the log" else next_offset)
