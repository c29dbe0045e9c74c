"""The log's aborted-transaction indexes: one per segment, living and dying with it."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.files import FileKind, FileState, segment_file_name
from broker_core.storage.local_log import LocalLog
from broker_core.storage.txn_index import ENTRY_SIZE, AbortedTxn
from tests.broker.storage.batch_factory import make_batch, small_config

CONFIG = small_config(segment_bytes=400)


def txn_path(directory: Path, base: int, state: FileState = FileState.LIVE) -> Path:
    return directory / segment_file_name(base, FileKind.TXN_INDEX, state)


def append(log: LocalLog, count: int) -> None:
    for i in range(count):
        log.append(make_batch(records=2, payload_size=40, fill=i))


def abort(log: LocalLog, pid: int, first: int, last: int) -> AbortedTxn:
    txn = AbortedTxn(pid, first, last, last + 1)
    log.append_aborted_txn(txn)
    return txn


@pytest.fixture
def log(log_dir, clock):
    opened = LocalLog.open(log_dir, CONFIG, clock=clock)
    yield opened
    opened.close()


def test_entry_goes_to_the_segment_holding_its_marker(log, log_dir):
    append(log, 6)
    bases = [segment.base_offset for segment in log.segments]
    assert len(bases) >= 2
    abort(log, 1, 0, bases[1] + 1)
    assert txn_path(log_dir, bases[1]).stat().st_size == ENTRY_SIZE
    assert not txn_path(log_dir, bases[0]).exists()


def test_marker_past_the_log_end_is_refused(log):
    append(log, 1)
    with pytest.raises(OffsetOutOfRangeError):
        log.append_aborted_txn(AbortedTxn(1, 0, 2, 3))


def test_search_walks_from_the_fetched_segment_into_later_ones(log):
    append(log, 10)
    bases = [segment.base_offset for segment in log.segments]
    assert len(bases) >= 3
    # Begun in the first segment, aborted in the third: a fetch of the first must hear of it.
    long_txn = AbortedTxn(1, 1, bases[2] + 1, bases[2] + 2)
    log.append_aborted_txn(long_txn)
    assert log.collect_aborted_transactions(0, 4) == [long_txn]
    assert log.collect_aborted_transactions(bases[2], bases[2] + 2) == [long_txn]
    assert log.collect_aborted_transactions(bases[2] + 2, bases[2] + 4) == []


def test_search_stops_at_the_segment_whose_entry_completes_it(log):
    append(log, 10)
    bases = [segment.base_offset for segment in log.segments]
    closing = AbortedTxn(1, 0, bases[1], bases[1] + 1)
    log.append_aborted_txn(closing)
    # Begun below the bound but aborted after an entry whose LSO passed it: by
    # Kafka's rule the search is over before this one.
    log.append_aborted_txn(AbortedTxn(2, 2, bases[2], bases[2] + 1))
    assert log.collect_aborted_transactions(0, 4) == [closing]


def test_rolled_segments_keep_their_entries(log, log_dir, clock):
    append(log, 2)
    first = abort(log, 1, 0, 3)
    log.roll()
    append(log, 2)
    second = abort(log, 2, 4, 7)
    assert log.collect_aborted_transactions(0, 8) == [first, second]
    log.close()
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock)
    try:
        assert reopened.collect_aborted_transactions(0, 8) == [first, second]
    finally:
        reopened.close()


def test_retention_deletes_the_index_with_its_segment(log_dir, clock):
    log = LocalLog.open(log_dir, small_config(segment_bytes=400, file_delete_delay_ms=1_000), clock=clock)
    append(log, 2)
    abort(log, 1, 0, 3)
    log.roll()
    append(log, 1)
    log.delete_records_before(4)
    assert not txn_path(log_dir, 0).exists()
    assert txn_path(log_dir, 0, FileState.DELETED).exists()
    log.run_pending_deletes(clock.advance(1_001))
    assert not txn_path(log_dir, 0, FileState.DELETED).exists()
    log.close()


def test_truncation_drops_entries_of_removed_markers(log, log_dir):
    append(log, 8)
    bases = [segment.base_offset for segment in log.segments]
    kept = abort(log, 1, 0, 1)
    abort(log, 2, 2, bases[1] + 1)
    abort(log, 3, 2, bases[-1] + 1)
    log.truncate_to(bases[1] + 1)
    assert log.collect_aborted_transactions(0, log.log_end_offset) == [kept]
    assert len(bases) >= 3
    assert not txn_path(log_dir, bases[-1]).exists()
    assert txn_path(log_dir, bases[1]).stat().st_size == 0


def test_truncate_aborted_txns_from_drops_entries_in_every_later_segment(log):
    append(log, 8)
    bases = [segment.base_offset for segment in log.segments]
    kept = abort(log, 1, 0, 1)
    abort(log, 2, 2, 3)
    abort(log, 3, 2, bases[-1])
    assert log.truncate_aborted_txns_from(3) == 2
    assert log.collect_aborted_transactions(0, log.log_end_offset) == [kept]


def test_recovery_of_a_torn_tail_drops_entries_past_the_new_end(log_dir, clock):
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    append(log, 3)
    survivor = abort(log, 1, 0, 1)
    abort(log, 2, 2, 5)
    active = log.active_segment
    size = active.size
    # The process dies mid-append: no close, and the last batch is torn.
    os.truncate(active.log_path, size - 10)
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock)
    try:
        assert reopened.log_end_offset == 4
        assert reopened.collect_aborted_transactions(0, 10) == [survivor]
    finally:
        reopened.close()


def test_torn_index_entry_is_cut_when_the_log_loads(log_dir, clock):
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    append(log, 3)
    first = abort(log, 1, 0, 1)
    abort(log, 2, 2, 3)
    log.close()
    path = txn_path(log_dir, 0)
    path.write_bytes(path.read_bytes()[:-1])
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock)
    try:
        assert reopened.collect_aborted_transactions(0, 10) == [first]
        assert reopened.txn_index_lost_from is None
    finally:
        reopened.close()


def test_corrupt_index_is_discarded_and_reported_when_the_log_loads(log_dir, clock):
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    append(log, 8)
    bases = [segment.base_offset for segment in log.segments]
    abort(log, 1, 0, bases[1])
    log.close()
    path = txn_path(log_dir, bases[1])
    path.write_bytes(struct.pack(">h", 9) + path.read_bytes()[2:])
    reopened = LocalLog.open(log_dir, CONFIG, clock=clock)
    try:
        assert reopened.txn_index_lost_from == bases[1]
        assert not path.exists()
        assert reopened.collect_aborted_transactions(0, reopened.log_end_offset) == []
        reopened.forget_lost_txn_index()
        assert reopened.txn_index_lost_from is None
    finally:
        reopened.close()


def test_index_without_its_log_is_removed_at_load(log_dir, clock):
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    append(log, 1)
    log.close()
    stray = txn_path(log_dir, 500)
    stray.write_bytes(struct.pack(">hqqqq", 0, 1, 500, 501, 502))
    LocalLog.open(log_dir, CONFIG, clock=clock).close()
    assert not stray.exists()
