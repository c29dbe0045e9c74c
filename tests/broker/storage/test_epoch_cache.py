"""Leader-epoch cache: assignment, OffsetForLeaderEpoch answers, truncation, persistence."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochFileCache,
)
from broker_core.storage.errors import CorruptCheckpointError
from broker_core.storage.files import LEADER_EPOCH_CHECKPOINT

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def cache_with(directory: Path, *entries: tuple[int, int]) -> LeaderEpochFileCache:
    cache = LeaderEpochFileCache(directory)
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


def pairs(cache: LeaderEpochFileCache) -> list[tuple[int, int]]:
    return [(e.epoch, e.start_offset) for e in cache.entries]


# -- assign ----------------------------------------------------------------------

ASSIGN_CASES = [
    ("first entry", [], (0, 0), True, [(0, 0)]),
    ("new epoch at a later offset is appended", [(0, 0)], (2, 10), True, [(0, 0), (2, 10)]),
    ("latest epoch at a later offset changes nothing", [(0, 0), (2, 10)], (2, 15), False, [(0, 0), (2, 10)]),
    ("latest epoch at its own offset changes nothing", [(0, 0), (2, 10)], (2, 10), False, [(0, 0), (2, 10)]),
    ("latest epoch at an earlier offset moves its start back", [(0, 0), (2, 10)], (2, 5), True, [(0, 0), (2, 5)]),
    ("new epoch at the previous epoch's start replaces it", [(0, 0), (2, 10)], (3, 10), True, [(0, 0), (3, 10)]),
    ("new epoch before the previous start drops it", [(0, 0), (2, 10)], (3, 7), True, [(0, 0), (3, 7)]),
    ("older epoch drops every newer entry", [(0, 0), (2, 10), (4, 20)], (3, 30), True, [(0, 0), (2, 10), (3, 30)]),
    ("older epoch at an earlier offset drops everything after", [(1, 0), (2, 10), (4, 20)], (1, 5), True, [(1, 5)]),
]


@pytest.mark.parametrize("name, before, new, changed, after", ASSIGN_CASES, ids=[c[0] for c in ASSIGN_CASES])
def test_assign_keeps_epochs_and_start_offsets_strictly_increasing(tmp_path, name, before, new, changed, after):
    cache = cache_with(tmp_path, *before)
    assert cache.assign(*new) is changed
    assert pairs(cache) == after
    assert pairs(LeaderEpochFileCache(tmp_path)) == after


def test_assign_that_drops_data_bearing_entries_logs_a_warning(tmp_path, caplog):
    cache = cache_with(tmp_path, (0, 0), (2, 10), (4, 20))
    with caplog.at_level(logging.WARNING):
        cache.assign(3, 15)
    assert "replaced conflicting entries" in caplog.text


def test_replacing_an_entry_that_holds_no_data_is_not_worth_a_warning(tmp_path, caplog):
    cache = cache_with(tmp_path, (0, 0), (2, 10))
    with caplog.at_level(logging.WARNING):
        cache.assign(3, 10)
    assert caplog.text == ""


@pytest.mark.parametrize("epoch, start", [(-1, 0), (0, -1)])
def test_assign_refuses_negative_values(tmp_path, epoch, start):
    with pytest.raises(ValueError):
        LeaderEpochFileCache(tmp_path).assign(epoch, start)


def test_latest_and_earliest(tmp_path):
    cache = cache_with(tmp_path, (1, 0), (3, 10))
    assert cache.latest_epoch == 3
    assert cache.latest_entry == EpochEntry(3, 10)
    assert cache.earliest_entry == EpochEntry(1, 0)


def test_empty_cache_has_no_latest_epoch(tmp_path):
    cache = LeaderEpochFileCache(tmp_path)
    assert cache.latest_epoch is None and cache.latest_entry is None and cache.earliest_entry is None


# -- end_offset_for ------------------------------------------------------------------

LOG_END = 30
END_OFFSET_CASES = [
    ("undefined epoch", UNDEFINED_EPOCH, UNDEFINED),
    ("latest epoch ends at the log end", 5, (5, LOG_END)),
    ("cached epoch ends where the next one starts", 3, (3, 20)),
    ("first cached epoch", 1, (1, 10)),
    ("uncached epoch between two answers the one below", 4, (3, 20)),
    ("another uncached epoch between two", 2, (1, 10)),
    ("epoch below every cached one answers the first start", 0, (0, 0)),
    ("epoch above the latest is undefined", 6, UNDEFINED),
]


@pytest.mark.parametrize("name, requested, expected", END_OFFSET_CASES, ids=[c[0] for c in END_OFFSET_CASES])
def test_end_offset_for_answers_like_offset_for_leader_epoch(tmp_path, name, requested, expected):
    cache = cache_with(tmp_path, (1, 0), (3, 10), (5, 20))
    assert cache.end_offset_for(requested, LOG_END) == expected


def test_end_offset_for_below_a_moved_log_start(tmp_path):
    cache = cache_with(tmp_path, (4, 100), (6, 150))
    assert cache.end_offset_for(2, 200) == (2, 100)


def test_end_offset_for_on_an_empty_cache_is_undefined(tmp_path):
    assert LeaderEpochFileCache(tmp_path).end_offset_for(0, 10) == UNDEFINED


EPOCH_FOR_OFFSET_CASES = [(0, 1), (9, 1), (10, 3), (19, 3), (20, 5), (10_000, 5)]


@pytest.mark.parametrize("offset, epoch", EPOCH_FOR_OFFSET_CASES)
def test_epoch_for_offset_is_the_entry_starting_at_or_below_it(tmp_path, offset, epoch):
    cache = cache_with(tmp_path, (1, 0), (3, 10), (5, 20))
    assert cache.epoch_for_offset(offset) == epoch


def test_epoch_for_offset_before_the_first_entry_is_unknown(tmp_path):
    assert cache_with(tmp_path, (2, 50)).epoch_for_offset(49) is None


# -- truncation ----------------------------------------------------------------------

ENTRIES = [(1, 0), (3, 10), (5, 20)]
TRUNCATE_FROM_END_CASES = [
    (30, ENTRIES),
    (21, ENTRIES),
    (20, [(1, 0), (3, 10)]),
    (11, [(1, 0), (3, 10)]),
    (10, [(1, 0)]),
    (0, []),
    (-1, ENTRIES),  # an undefined offset truncates nothing
]


@pytest.mark.parametrize("end_offset, remaining", TRUNCATE_FROM_END_CASES)
def test_truncate_from_end_drops_entries_starting_at_or_after_it(tmp_path, end_offset, remaining):
    cache = cache_with(tmp_path, *ENTRIES)
    cache.truncate_from_end(end_offset)
    assert pairs(cache) == remaining
    assert pairs(LeaderEpochFileCache(tmp_path)) == remaining


TRUNCATE_FROM_START_CASES = [
    (0, ENTRIES),
    (5, [(1, 5), (3, 10), (5, 20)]),
    (10, [(3, 10), (5, 20)]),
    (15, [(3, 15), (5, 20)]),
    (25, [(5, 25)]),
]


@pytest.mark.parametrize("start_offset, remaining", TRUNCATE_FROM_START_CASES)
def test_truncate_from_start_moves_the_epoch_holding_the_new_start(tmp_path, start_offset, remaining):
    cache = cache_with(tmp_path, *ENTRIES)
    cache.truncate_from_start(start_offset)
    assert pairs(cache) == remaining
    assert pairs(LeaderEpochFileCache(tmp_path)) == remaining


def test_truncate_from_start_before_the_first_entry_changes_nothing(tmp_path):
    cache = cache_with(tmp_path, (2, 50))
    cache.truncate_from_start(10)
    assert pairs(cache) == [(2, 50)]


def test_clear_and_flush_persists_an_empty_cache(tmp_path):
    cache = cache_with(tmp_path, *ENTRIES)
    cache.clear_and_flush()
    assert cache.entries == ()
    assert (tmp_path / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n0\n"
    assert LeaderEpochFileCache(tmp_path).entries == ()


# -- persistence -----------------------------------------------------------------------


def test_checkpoint_uses_kafkas_text_format(tmp_path):
    cache_with(tmp_path, (0, 0), (3, 1200))
    assert (tmp_path / LEADER_EPOCH_CHECKPOINT).read_bytes() == b"0\n2\n0 0\n3 1200\n"


def test_kafka_written_checkpoint_loads(tmp_path):
    (tmp_path / LEADER_EPOCH_CHECKPOINT).write_text("0\n3\n0 0\n2  57\n7 1000\n")
    assert pairs(LeaderEpochFileCache(tmp_path)) == [(0, 0), (2, 57), (7, 1000)]


def test_missing_or_empty_checkpoint_means_no_entries(tmp_path):
    assert LeaderEpochFileCache(tmp_path).entries == ()
    (tmp_path / LEADER_EPOCH_CHECKPOINT).write_bytes(b"")
    assert LeaderEpochFileCache(tmp_path).entries == ()


def test_conflicting_entries_in_a_checkpoint_load_as_assign_would_leave_them(tmp_path):
    (tmp_path / LEADER_EPOCH_CHECKPOINT).write_text("0\n3\n1 0\n4 20\n2 10\n")
    assert pairs(LeaderEpochFileCache(tmp_path)) == [(1, 0), (2, 10)]


def test_writes_leave_no_temporary_file(tmp_path):
    cache_with(tmp_path, *ENTRIES).truncate_from_end(15)
    assert sorted(p.name for p in tmp_path.iterdir()) == [LEADER_EPOCH_CHECKPOINT]


CORRUPT_FILES = [
    ("unknown version", "1\n0\n", "unsupported version"),
    ("version line only", "0\n", "missing"),
    ("count larger than the entries", "0\n2\n1 0\n", "declares 2 entries, the file has 1"),
    ("count smaller than the entries", "0\n1\n1 0\n2 5\n", "declares 1 entries, the file has 2"),
    ("three fields", "0\n1\n1 0 9\n", "space-separated fields"),
    ("one field", "0\n1\n1\n", "space-separated fields"),
    ("blank entry line", "0\n1\n\n", "space-separated fields"),
    ("not a number", "0\n1\n1 x\n", "malformed number"),
    ("signed with plus", "0\n1\n+1 0\n", "malformed number"),
    ("double minus", "0\n1\n--1 0\n", "malformed number"),
    ("negative offset", "0\n1\n1 -4\n", "negative"),
    ("not text", b"\xff\xfe\n", "utf-8"),
]


@pytest.mark.parametrize("name, content, reason", CORRUPT_FILES, ids=[c[0] for c in CORRUPT_FILES])
def test_corrupt_checkpoint_raises_an_error_naming_the_file(tmp_path, name, content, reason):
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(CorruptCheckpointError, match=reason) as caught:
        LeaderEpochFileCache(tmp_path)
    assert caught.value.path == path
    assert str(path) in str(caught.value)


# -- properties --------------------------------------------------------------------------

operations = st.lists(
    st.one_of(
        st.tuples(st.just("assign"), st.integers(0, 20), st.integers(0, 500)),
        st.tuples(st.just("from_end"), st.integers(-1, 500)),
        st.tuples(st.just("from_start"), st.integers(0, 500)),
    ),
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(ops=operations)
def test_any_history_keeps_entries_strictly_increasing_and_survives_a_reopen(tmp_path_factory, ops):
    directory = tmp_path_factory.mktemp("epochs")
    cache = LeaderEpochFileCache(directory)
    for op in ops:
        if op[0] == "assign":
            cache.assign(op[1], op[2])
        elif op[0] == "from_end":
            cache.truncate_from_end(op[1])
        else:
            cache.truncate_from_start(op[1])
    entries = pairs(cache)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(entries, entries[1:]))
    if (directory / LEADER_EPOCH_CHECKPOINT).exists():
        assert pairs(LeaderEpochFileCache(directory)) == entries
    else:
        assert entries == []
