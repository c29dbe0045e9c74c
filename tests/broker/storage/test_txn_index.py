"""The aborted-transaction index file: format, ordering, search, truncation, damage."""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.txn_index import (
    ENTRY_SIZE,
    AbortedTxn,
    CorruptTxnIndexError,
    TransactionIndex,
    TxnIndexOrderError,
    TxnIndexSearchResult,
)

BASE = 100


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / f"{BASE:020d}.txnindex"


@pytest.fixture
def index(path: Path) -> TransactionIndex:
    return TransactionIndex(path, BASE)


def reopened(path: Path) -> TransactionIndex:
    fresh = TransactionIndex(path, BASE)
    fresh.sanity_check()
    return fresh


# -- format --------------------------------------------------------------------


def test_entry_is_34_big_endian_bytes_led_by_version_0(index, path):
    index.append(AbortedTxn(producer_id=7, first_offset=101, last_offset=105, last_stable_offset=106))
    index.flush()
    data = path.read_bytes()
    assert ENTRY_SIZE == 34
    assert data == struct.pack(">hqqqq", 0, 7, 101, 105, 106)


def test_file_is_created_only_at_the_first_abort(index, path):
    assert index.entries() == []
    assert not path.exists()
    index.append(AbortedTxn(1, 100, 101, 102))
    assert path.exists()


def test_entries_survive_a_reopen_in_order(index, path):
    entries = [AbortedTxn(1, 100, 103, 104), AbortedTxn(2, 101, 110, 111), AbortedTxn(1, 120, 125, 126)]
    for entry in entries:
        index.append(entry)
    index.close()
    assert reopened(path).entries() == entries


# -- ordering ------------------------------------------------------------------


def test_append_refuses_an_entry_ending_at_or_before_the_last_one(index):
    index.append(AbortedTxn(1, 100, 110, 111))
    with pytest.raises(TxnIndexOrderError):
        index.append(AbortedTxn(2, 100, 110, 111))
    with pytest.raises(TxnIndexOrderError):
        index.append(AbortedTxn(2, 100, 105, 106))
    assert len(index) == 1


def test_append_refuses_an_entry_starting_after_its_marker_or_ending_below_the_segment(index):
    with pytest.raises(ValueError):
        index.append(AbortedTxn(1, 120, 110, 121))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(1, 90, 99, 100))


# -- search --------------------------------------------------------------------


def test_search_returns_transactions_ending_at_or_after_the_fetch_and_starting_below_the_bound(index):
    index.append(AbortedTxn(1, 100, 104, 105))  # ends before the fetch
    index.append(AbortedTxn(2, 103, 112, 113))  # started before the fetch, ends inside
    index.append(AbortedTxn(3, 115, 118, 119))  # inside
    index.append(AbortedTxn(4, 130, 131, 132))  # starts at the bound
    result = index.collect_aborted(110, 130)
    assert [txn.producer_id for txn in result.aborted] == [2, 3]


def test_search_is_complete_once_an_entry_lso_reaches_the_bound(index):
    index.append(AbortedTxn(1, 100, 105, 101))  # another transaction still open from 101
    index.append(AbortedTxn(2, 101, 120, 121))
    index.append(AbortedTxn(3, 122, 125, 126))
    partial = index.collect_aborted(100, 115)
    assert partial == TxnIndexSearchResult([AbortedTxn(1, 100, 105, 101), AbortedTxn(2, 101, 120, 121)], True)
    open_ended = index.collect_aborted(100, 200)
    assert not open_ended.is_complete
    assert len(open_ended.aborted) == 3


def test_search_of_an_empty_index_is_incomplete_and_empty(index):
    assert index.collect_aborted(0, 1000) == TxnIndexSearchResult([], False)


@settings(max_examples=100, deadline=None)
@given(
    spans=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20)), max_size=30),
    fetch=st.integers(90, 400),
    width=st.integers(1, 100),
)
def test_search_agrees_with_a_linear_scan(tmp_path_factory, spans, fetch, width):
    index = TransactionIndex(tmp_path_factory.mktemp("t") / "x.txnindex", BASE)
    last = BASE
    entries = []
    for lead, gap in spans:
        last += gap
        entry = AbortedTxn(len(entries), max(0, last - lead), last, last + 1)
        index.append(entry)
        entries.append(entry)
    upper = fetch + width
    expected = []
    for entry in entries:
        if entry.last_offset >= fetch and entry.first_offset < upper:
            expected.append(entry)
        if entry.last_stable_offset >= upper:
            break
    assert index.collect_aborted(fetch, upper).aborted == expected


# -- truncation ----------------------------------------------------------------


def test_truncate_drops_entries_whose_marker_is_at_or_after_the_offset(index, path):
    for i, last in enumerate([102, 105, 109]):
        index.append(AbortedTxn(i, 100, last, last + 1))
    assert index.truncate_to(105) == 2
    assert [txn.last_offset for txn in index.entries()] == [102]
    assert path.stat().st_size == ENTRY_SIZE
    index.append(AbortedTxn(9, 103, 104, 105))
    index.close()
    assert [txn.last_offset for txn in reopened(path).entries()] == [102, 104]


def test_truncate_below_every_entry_empties_the_file(index, path):
    index.append(AbortedTxn(1, 100, 102, 103))
    assert index.truncate_to(0) == 1
    assert path.read_bytes() == b""


# -- damage --------------------------------------------------------------------


def test_torn_last_entry_is_cut_off_with_a_warning(index, path, caplog):
    index.append(AbortedTxn(1, 100, 102, 103))
    index.append(AbortedTxn(2, 100, 104, 105))
    index.close()
    path.write_bytes(path.read_bytes()[:-7])
    fresh = TransactionIndex(path, BASE)
    with caplog.at_level(logging.WARNING):
        assert fresh.sanity_check() == ENTRY_SIZE - 7
    assert "torn" in caplog.text
    assert fresh.entries() == [AbortedTxn(1, 100, 102, 103)]
    assert path.stat().st_size == ENTRY_SIZE


def test_entry_of_an_unknown_version_is_corrupt_and_names_the_file(path):
    path.write_bytes(struct.pack(">hqqqq", 0, 1, 100, 101, 102) + struct.pack(">hqqqq", 3, 1, 100, 103, 104))
    with pytest.raises(CorruptTxnIndexError) as raised:
        TransactionIndex(path, BASE).sanity_check()
    assert isinstance(raised.value, CorruptIndexError)
    assert raised.value.path == path
    assert str(path) in str(raised.value)
    assert "version 3" in str(raised.value)


@pytest.mark.parametrize(
    "first, last",
    [(100, 99), (105, 104)],
    ids=["marker below the segment", "transaction starting after its marker"],
)
def test_entry_that_cannot_belong_to_the_segment_is_corrupt(path, first, last):
    path.write_bytes(struct.pack(">hqqqq", 0, 1, first, last, last + 1))
    with pytest.raises(CorruptTxnIndexError):
        TransactionIndex(path, BASE).sanity_check()


def test_entries_out_of_order_on_disk_are_corrupt(path):
    path.write_bytes(struct.pack(">hqqqq", 0, 1, 100, 110, 111) + struct.pack(">hqqqq", 0, 2, 100, 105, 106))
    with pytest.raises(CorruptTxnIndexError):
        TransactionIndex(path, BASE).sanity_check()


def test_reset_removes_the_file_and_every_entry(index, path):
    index.append(AbortedTxn(1, 100, 102, 103))
    index.reset()
    assert not path.exists()
    assert index.entries() == []


def test_rename_moves_the_file_and_keeps_appending_there(index, path):
    index.append(AbortedTxn(1, 100, 102, 103))
    moved = path.with_name(path.name + ".deleted")
    index.rename(moved)
    assert not path.exists()
    index.append(AbortedTxn(2, 100, 104, 105))
    index.close()
    assert len(moved.read_bytes()) == 2 * ENTRY_SIZE


def test_rename_without_a_file_only_changes_the_path(index, path):
    moved = path.with_name(path.name + ".deleted")
    index.rename(moved)
    assert index.path == moved
    assert not moved.exists()
