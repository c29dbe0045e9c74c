"""UnifiedLog: one call takes a produce request through validation, producer state, the append,
the aborted-transaction index and the epoch cache (unified_log.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import ControlBatchFromClientError, InvalidTimestampError
from broker_core.storage.local_log import LocalLog
from broker_core.storage.producer_state import AppendOrigin, OutOfOrderSequenceError
from broker_core.storage.txn_index import AbortedTxn
from broker_core.storage.unified_log import UnifiedLog
from spate.records import ControlType, Record, TimestampType, build_batch, build_control_batch, iter_batches
from spate.records.errors import CorruptRecordError
from tests.broker.storage.batch_factory import FakeClock

EXPIRATION_MS = 86_400_000
EPOCH = 3


def batch(pid: int = -1, seq: int = -1, count: int = 1, *, transactional: bool = False, ts: int = 1_000) -> bytes:
    records = [Record(offset=i, timestamp=ts + i, key=None, value=b"v%d" % i) for i in range(count)]
    if pid < 0:
        return build_batch(records)
    return build_batch(records, producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=transactional)


def corrupt(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def open_log(directory: Path, clock: FakeClock, **config: object) -> UnifiedLog:
    local = LocalLog.open(directory, LogConfig(**config), clock=clock)
    return UnifiedLog(local, clock=clock, producer_id_expiration_ms=EXPIRATION_MS)


@pytest.fixture
def log(log_dir: Path, clock: FakeClock) -> UnifiedLog:
    return open_log(log_dir, clock)


def test_append_assigns_offsets_and_stamps_the_leader_epoch(log: UnifiedLog):
    log.append_as_leader(batch(count=2), leader_epoch=EPOCH)
    result = log.append_as_leader(batch(pid=7, seq=0, count=3), leader_epoch=EPOCH)
    assert (result.base_offset, result.last_offset, result.duplicate) == (2, 4, False)
    assert log.log_end_offset == 5
    headers = list(iter_batches(log.read(0, 1 << 20).read_bytes()))
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(0, EPOCH), (2, EPOCH)]
    assert log.producer_state.last_entry(7).last_offset == 4
    assert log.producer_state.map_end_offset == 5


@pytest.mark.parametrize(
    "second, error",
    [
        (corrupt(batch(pid=2, seq=0)), CorruptRecordError),
        (batch(pid=1, seq=5), OutOfOrderSequenceError),
        (build_control_batch(ControlType.COMMIT, 1, 0, 0, timestamp=1_000), ControlBatchFromClientError),
    ],
    ids=["bad CRC", "sequence gap", "client control batch"],
)
def test_a_refused_batch_anywhere_in_the_request_writes_nothing_and_leaves_producer_state_untouched(
    log: UnifiedLog, second: bytes, error: type[Exception]
):
    log.append_as_leader(batch(pid=9, seq=0), leader_epoch=EPOCH)
    before = dict(log.producer_state.active_producers())
    with pytest.raises(error):
        log.append_as_leader(batch(pid=1, seq=0) + second, leader_epoch=EPOCH)
    assert log.log_end_offset == 1
    assert log.local_log.size_in_bytes == len(batch(pid=9, seq=0))
    assert dict(log.producer_state.active_producers()) == before
    assert log.producer_state.map_end_offset == 1


def test_an_empty_request_is_corrupt(log: UnifiedLog):
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(b"", leader_epoch=EPOCH)


def test_a_retried_batch_is_answered_with_its_original_offsets_and_not_written_again(log: UnifiedLog):
    log.append_as_leader(batch(count=4), leader_epoch=EPOCH)
    first = log.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=EPOCH)
    size = log.local_log.size_in_bytes
    retry = log.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=EPOCH)
    assert (retry.base_offset, retry.last_offset, retry.duplicate) == (first.base_offset, first.last_offset, True)
    assert (retry.base_offset, retry.last_offset) == (4, 5)
    assert log.log_end_offset == 6
    assert log.local_log.size_in_bytes == size


def test_a_retry_mixed_with_new_batches_is_out_of_order(log: UnifiedLog):
    log.append_as_leader(batch(pid=7, seq=0), leader_epoch=EPOCH)
    with pytest.raises(OutOfOrderSequenceError):
        log.append_as_leader(batch(pid=7, seq=0) + batch(pid=8, seq=0), leader_epoch=EPOCH)
    assert log.log_end_offset == 1


def test_an_abort_marker_indexes_the_transaction_it_closes(log: UnifiedLog):
    log.append_as_leader(batch(), leader_epoch=EPOCH)
    log.append_as_leader(batch(pid=7, seq=0, count=3, transactional=True), leader_epoch=EPOCH)
    assert log.first_unstable_offset() == 1
    marker = log.append_txn_marker(
        producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=False, leader_epoch=EPOCH
    )
    assert marker.base_offset == 4
    assert log.first_unstable_offset() is None
    assert log.collect_aborted_transactions(0, log.log_end_offset) == [AbortedTxn(7, 1, 4, 5)]


def test_a_commit_marker_indexes_nothing(log: UnifiedLog):
    log.append_as_leader(batch(pid=7, seq=0, transactional=True), leader_epoch=EPOCH)
    log.append_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=True, leader_epoch=EPOCH)
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []


def test_a_producer_may_not_claim_log_append_time(log: UnifiedLog):
    claimed = build_batch([Record(0, 5_000, b"k", b"v")], timestamp_type=TimestampType.LOG_APPEND_TIME,
                          log_append_time=5_000)
    with pytest.raises(InvalidTimestampError, match="LogAppendTime"):
        log.append_as_leader(claimed, leader_epoch=EPOCH)
    assert log.log_end_offset == 0


def test_a_coordinator_may_write_markers_but_a_client_may_not(log: UnifiedLog):
    marker = build_control_batch(ControlType.ABORT, 7, 0, 0, timestamp=1_000)
    with pytest.raises(ControlBatchFromClientError):
        log.append_as_leader(marker, leader_epoch=EPOCH)
    assert log.append_as_leader(marker, leader_epoch=EPOCH, origin=AppendOrigin.COORDINATOR).base_offset == 0


def test_appends_record_where_their_leader_epoch_started(log: UnifiedLog):
    log.append_as_leader(batch(count=2), leader_epoch=1)
    log.append_as_leader(batch(), leader_epoch=1)
    log.append_as_leader(batch(), leader_epoch=4)
    assert [(e.epoch, e.start_offset) for e in log.epoch_cache.entries] == [(1, 0), (4, 3)]
    assert log.end_offset_for_epoch(1) == (1, 3)
    assert log.end_offset_for_epoch(4) == (4, 4)


def test_reopening_replays_producer_state_and_lost_index_entries(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append_as_leader(batch(pid=7, seq=0, count=2, transactional=True), leader_epoch=EPOCH)
    log.append_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=False, leader_epoch=EPOCH)
    log.append_as_leader(batch(pid=8, seq=0), leader_epoch=EPOCH)
    for path in log_dir.glob("*.txnindex"):
        path.unlink()
    reopened = open_log(log_dir, clock)
    assert reopened.collect_aborted_transactions(0, reopened.log_end_offset) == [AbortedTxn(7, 0, 2, 3)]
    assert reopened.producer_state.last_entry(8).last_seq == 0
    assert reopened.append_as_leader(batch(pid=8, seq=0), leader_epoch=EPOCH).duplicate


def test_checkpoint_snapshots_producer_state_at_the_log_end(log: UnifiedLog):
    log.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=EPOCH)
    log.checkpoint()
    assert log.producer_state.snapshot_offsets() == [2]
    assert log.local_log.recovery_point == 2


def test_offset_for_timestamp_answers_the_first_record_at_or_after_it(log: UnifiedLog):
    log.append_as_leader(batch(count=3, ts=100), leader_epoch=EPOCH)  # timestamps 100, 101, 102
    log.append_as_leader(batch(count=2, ts=200), leader_epoch=EPOCH)
    assert log.offset_for_timestamp(101) == (101, 1)
    assert log.offset_for_timestamp(150) == (200, 3)
    assert log.offset_for_timestamp(500) is None


def test_delete_records_moves_the_log_start(log: UnifiedLog):
    log.append_as_leader(batch(count=5), leader_epoch=EPOCH)
    assert log.delete_records_before(3) == 3
    assert log.log_start_offset == 3
