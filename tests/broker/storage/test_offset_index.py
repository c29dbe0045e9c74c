"""The sparse offset index: layout, lookups, limits and crash checks."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.offset_index import OffsetIndex, OffsetPosition

BASE = 1_000


def active_index(path: Path, max_size: int = 8 * 64) -> OffsetIndex:
    index = OffsetIndex(path, BASE, max_size)
    index.activate()
    return index


def test_entries_are_relative_offset_and_position_as_big_endian_int32(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    index.append(BASE + 5, 4200)
    index.close()
    assert (tmp_path / "i.index").read_bytes() == struct.pack(">ii", 5, 4200)


def test_lookup_on_an_empty_index_returns_the_segment_start(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    assert index.lookup(BASE + 100) == OffsetPosition(BASE, 0)


def test_lookup_returns_greatest_entry_at_or_below_target(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    for offset, position in [(10, 100), (20, 250), (30, 400)]:
        index.append(BASE + offset, position)
    assert index.lookup(BASE + 20) == OffsetPosition(BASE + 20, 250)
    assert index.lookup(BASE + 25) == OffsetPosition(BASE + 20, 250)
    assert index.lookup(BASE + 99) == OffsetPosition(BASE + 30, 400)
    assert index.lookup(BASE + 9) == OffsetPosition(BASE, 0)
    assert index.lookup(BASE - 5) == OffsetPosition(BASE, 0)


def test_lookup_by_position_returns_greatest_entry_at_or_below_it(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    for offset, position in [(10, 100), (20, 250)]:
        index.append(BASE + offset, position)
    assert index.lookup_by_position(249) == OffsetPosition(BASE + 10, 100)
    assert index.lookup_by_position(250) == OffsetPosition(BASE + 20, 250)
    assert index.lookup_by_position(50) == OffsetPosition(BASE, 0)


def test_append_requires_both_fields_to_increase(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    index.append(BASE + 10, 100)
    with pytest.raises(ValueError):
        index.append(BASE + 10, 200)
    with pytest.raises(ValueError):
        index.append(BASE + 11, 100)
    with pytest.raises(ValueError):
        index.append(BASE - 1, 300)


def test_index_is_full_at_its_maximum_size_and_refuses_more(tmp_path: Path):
    index = active_index(tmp_path / "i.index", max_size=8 * 3 + 5)
    assert index.max_entries == 3
    for i in range(3):
        index.append(BASE + i + 1, (i + 1) * 10)
    assert index.is_full
    with pytest.raises(ValueError):
        index.append(BASE + 10, 100)


def test_active_index_file_is_preallocated_and_trimmed_on_close(tmp_path: Path):
    path = tmp_path / "i.index"
    index = active_index(path, max_size=8 * 64)
    index.append(BASE + 1, 10)
    index.flush()  # the entry waited in memory until then
    assert path.stat().st_size == 8 * 64
    index.close()
    assert path.stat().st_size == 8


def test_reopening_a_preallocated_index_counts_only_real_entries(tmp_path: Path):
    path = tmp_path / "i.index"
    index = active_index(path)
    index.append(BASE + 1, 10)
    index.append(BASE + 2, 20)
    index.flush()
    index.release()  # no trim: what a crash leaves behind
    reopened = OffsetIndex(path, BASE, 8 * 64)
    assert reopened.entries == 2
    assert reopened.lookup(BASE + 5) == OffsetPosition(BASE + 2, 20)


def test_truncate_to_position_drops_entries_at_or_after_it(tmp_path: Path):
    index = active_index(tmp_path / "i.index")
    for offset, position in [(10, 100), (20, 250), (30, 400)]:
        index.append(BASE + offset, position)
    index.truncate_to_position(250)
    assert index.entries == 1
    assert index.last_entry == OffsetPosition(BASE + 10, 100)
    index.append(BASE + 15, 180)
    assert index.lookup(BASE + 40) == OffsetPosition(BASE + 15, 180)


def test_a_size_that_is_not_a_whole_number_of_entries_is_corrupt(tmp_path: Path):
    path = tmp_path / "i.index"
    path.write_bytes(struct.pack(">ii", 1, 10) + b"\x01\x02\x03")
    with pytest.raises(CorruptIndexError, match="not a multiple"):
        OffsetIndex(path, BASE, 1024)


def test_an_empty_entry_between_entries_fails_the_sanity_check(tmp_path: Path):
    path = tmp_path / "i.index"
    path.write_bytes(struct.pack(">ii", 1, 10) + bytes(8) + struct.pack(">ii", 3, 30))
    index = OffsetIndex(path, BASE, 1024)
    with pytest.raises(CorruptIndexError, match="does not increase"):
        index.sanity_check(log_size=100)


def test_opening_a_preallocated_index_reads_a_few_entries_not_its_zero_tail(tmp_path: Path, monkeypatch):
    path = tmp_path / "i.index"
    entries = [struct.pack(">ii", i + 1, (i + 1) * 100) for i in range(1000)]
    path.write_bytes(b"".join(entries) + bytes(8 * 1_000_000))
    reads = []
    real_pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, at: reads.append(n) or real_pread(fd, n, at))
    index = OffsetIndex(path, BASE, 16 * 1024 * 1024)
    assert index.entries == 1000
    assert len(reads) <= 25 and sum(reads) <= 25 * 8


@pytest.mark.parametrize(
    "entries, log_size, problem",
    [
        ([(5, 100), (5, 200)], 1000, "relative offset"),
        ([(5, 100), (4, 200)], 1000, "relative offset"),
        ([(5, 200), (6, 100)], 1000, "position"),
        ([(-3, 100)], 1000, "relative offset"),
        ([(5, 100), (6, 1000)], 1000, "past the log"),
    ],
)
def test_sanity_check_rejects_entries_that_do_not_fit_the_log(tmp_path: Path, entries, log_size, problem):
    path = tmp_path / "i.index"
    path.write_bytes(b"".join(struct.pack(">ii", *entry) for entry in entries))
    index = OffsetIndex(path, BASE, 1024)
    with pytest.raises(CorruptIndexError, match=problem):
        index.sanity_check(log_size)


@settings(max_examples=100, deadline=None)
@given(
    gaps=st.lists(st.tuples(st.integers(1, 50), st.integers(1, 5000)), max_size=200),
    keep=st.floats(0, 1),
    more=st.integers(0, 80),
    targets=st.lists(st.integers(BASE - 10, BASE + 12_000), min_size=1, max_size=30),
)
def test_lookup_matches_a_linear_search_across_appends_and_truncation(tmp_path_factory, gaps, keep, more, targets):
    path = tmp_path_factory.mktemp("idx") / "i.index"
    index = OffsetIndex(path, BASE, 8 * 400)
    index.activate()
    entries: list[OffsetPosition] = []

    def append(count: int) -> None:
        offset, position = (entries[-1].offset, entries[-1].position) if entries else (BASE, 0)
        for offset_gap, position_gap in (gaps * 2)[:count]:
            offset += offset_gap
            position += position_gap
            index.append(offset, position)
            entries.append(OffsetPosition(offset, position))

    def check() -> None:
        for target in targets:
            expected = max((e for e in entries if e.offset <= target), key=lambda e: e.offset, default=OffsetPosition(BASE, 0))
            assert index.lookup(target) == expected

    append(len(gaps))
    check()
    kept = int(keep * len(entries))
    index.truncate_to_position(entries[kept].position if kept < len(entries) else 10**9)
    del entries[kept:]
    check()
    append(min(more, len(gaps)))
    check()
    index.close()
