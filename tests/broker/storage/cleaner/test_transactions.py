"""Cleaning a log with transactions: committed data compacts like any other, aborted data goes,
markers stay while their transaction has records, producer state survives (segment_cleaner.py)."""

from __future__ import annotations

from pathlib import Path

from broker_core.storage.unified_log import UnifiedLog
from spate.records import iter_batches
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.cleaner.cleaner_fixture import EPOCH, append, cleaner_for, contents, keyed, open_log


def txn(log: UnifiedLog, pid: int, seq: int, pairs, *, commit: bool) -> None:
    log.append_as_leader(
        keyed(pairs, producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=True), leader_epoch=EPOCH
    )
    log.append_txn_marker(producer_id=pid, producer_epoch=0, coordinator_epoch=0, commit=commit, leader_epoch=EPOCH)


def batches(log: UnifiedLog) -> list:
    return list(iter_batches(log.read(log.log_start_offset, 1 << 24).read_bytes()))


def all_batches(log: UnifiedLog) -> list:
    found, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        chunk = list(iter_batches(log.read(offset, 1 << 24).read_bytes()))
        if not chunk:
            break
        found += chunk
        offset = chunk[-1].next_offset
    return found


def test_aborted_records_go_and_committed_ones_compact(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    txn(log, 7, 0, [("a", "committed"), ("b", "committed")], commit=True)
    txn(log, 8, 0, [("c", "aborted"), ("a", "aborted")], commit=False)
    log.local_log.roll()
    append(log, [("z", "next")])
    log.local_log.roll()
    cleaner_for(log, clock).clean_once()
    assert [(k, v) for _, k, v in contents(log)] == [("a", "committed"), ("b", "committed"), ("z", "next")]


def test_markers_stay_while_their_transaction_has_records_then_go_after_delete_retention(
    log_dir: Path, clock: FakeClock
):
    log = open_log(log_dir, clock, delete_retention_ms=1_000)
    txn(log, 7, 0, [("a", "1")], commit=True)
    txn(log, 8, 0, [("b", "x")], commit=False)
    log.local_log.roll()
    cleaner = cleaner_for(log, clock)
    append(log, [("q", "q")])
    log.local_log.roll()
    cleaner.clean_once()
    def markers() -> list[int]:
        return [b.base_offset for b in all_batches(log) if b.is_control]

    assert markers() == [1, 3]  # the abort marker's data is gone: its delete horizon starts now
    clock.advance(2_000)
    append(log, [("a", "2")])  # supersedes the committed transaction's only record
    log.local_log.roll()
    cleaner.clean_once()
    assert markers() == [1]  # the abort marker's horizon passed; the commit marker's starts now
    clock.advance(2_000)
    append(log, [("r", "r")])
    log.local_log.roll()
    cleaner.clean_once()
    assert markers() == []


def test_the_last_batch_of_a_live_producer_keeps_its_header_when_emptied(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append_as_leader(keyed([("a", "1")], producer_id=5, producer_epoch=2, base_sequence=0), leader_epoch=EPOCH)
    log.local_log.roll()
    append(log, [("a", "2")])
    log.local_log.roll()
    cleaner_for(log, clock).clean_once()
    found = all_batches(log)
    assert [(b.base_offset, b.records_count, b.producer_id, b.producer_epoch, b.base_sequence) for b in found] == [
        (0, 0, 5, 2, 0), (1, 1, -1, -1, -1),
    ]
    log.close()
    reopened = open_log(log_dir, clock)
    entry = reopened.producer_state.last_entry(5)
    assert entry is not None and (entry.producer_epoch, entry.last_seq) == (2, 0)


def test_read_committed_sees_the_same_records_before_and_after_cleaning(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    txn(log, 7, 0, [("a", "1"), ("b", "1")], commit=True)
    txn(log, 8, 0, [("c", "x")], commit=False)
    txn(log, 7, 2, [("d", "2")], commit=True)
    log.local_log.roll()
    append(log, [("e", "3")])
    log.local_log.roll()

    def committed() -> list[tuple[str, str | None]]:
        aborted = log.collect_aborted_transactions(0, log.log_end_offset)
        spans = [(t.producer_id, t.first_offset, t.last_offset) for t in aborted]
        kept = []
        for offset, key, value in contents(log):
            if not any(first <= offset <= last for _, first, last in spans):
                kept.append((key, value))
        return kept

    before = committed()
    cleaner_for(log, clock).clean_once()
    assert committed() == before == [("a", "1"), ("b", "1"), ("d", "2"), ("e", "3")]
