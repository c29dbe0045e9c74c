"""A partition's side of transactions: the LSO, markers, the aborted index and recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.replication.partition import Partition
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import ControlBatchFromClientError
from broker_core.storage.files import FileKind, segment_file_name
from broker_core.storage.local_log import LocalLog
from broker_core.storage.producer_state import (
    AppendOrigin,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from broker_core.storage.txn_index import AbortedTxn
from broker_core.storage.unified_log import UnifiedLog
from spate.records import (
    NO_SEQUENCE,
    ControlType,
    Record,
    build_batch,
    build_control_batch,
    iter_batches,
)
from spate.structs import IsolationLevel

NOW = 1_700_000_000_000
CONFIG = LogConfig(segment_bytes=2_000, index_interval_bytes=100)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> int:
        return self.now


class Producers:
    """Next sequence per producer, so every batch follows on."""

    def __init__(self) -> None:
        self.sequences: dict[int, int] = {}

    def batch(self, pid: int, count: int = 1, *, epoch: int = 0, transactional: bool = True) -> bytes:
        seq = self.sequences.get(pid, 0)
        self.sequences[pid] = seq + count
        records = [Record(offset=i, timestamp=NOW, key=None, value=b"v%d" % i) for i in range(count)]
        return build_batch(
            records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional
        )


def open_partition(directory: Path, clock: Clock) -> Partition:
    log = UnifiedLog(LocalLog.open(directory, CONFIG, clock=clock), clock=clock, producer_id_expiration_ms=86_400_000)
    return Partition("t", 0, log, leader_epoch=0)


def plain(count: int = 1) -> bytes:
    return build_batch([Record(offset=i, timestamp=NOW, key=None, value=b"p") for i in range(count)])


def offsets_read(partition: Partition, offset: int, isolation_level: int = IsolationLevel.READ_COMMITTED) -> list[int]:
    read = partition.read(offset, 1 << 20, isolation_level=isolation_level, min_one_batch=True)
    return [header.base_offset for header in iter_batches(read.slice.read_bytes())]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "t-0"


@pytest.fixture
def partition(directory: Path, clock: Clock) -> Partition:
    return open_partition(directory, clock)


@pytest.fixture
def producers() -> Producers:
    return Producers()


# -- the last stable offset ---------------------------------------------------------


def test_open_transaction_holds_the_lso_at_its_first_offset(partition, producers):
    partition.append_records(plain())
    partition.append_records(producers.batch(7, 2))
    assert partition.high_watermark == 3
    assert partition.last_stable_offset == 1
    assert offsets_read(partition, 0) == [0]
    assert offsets_read(partition, 1) == []
    assert offsets_read(partition, 0, IsolationLevel.READ_UNCOMMITTED) == [0, 1]


def test_commit_marker_advances_the_lso_past_itself(partition, producers):
    partition.append_records(producers.batch(7, 2))
    marker = partition.write_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=True)
    assert marker == 2
    assert partition.last_stable_offset == partition.high_watermark == 3
    read = partition.read(0, 1 << 20, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert read.aborted_transactions == []
    assert offsets_read(partition, 0) == [0, 2]


def test_lso_is_the_oldest_of_several_open_transactions(partition, producers):
    partition.append_records(producers.batch(1))
    partition.append_records(producers.batch(2))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=True)
    assert partition.last_stable_offset == 1


# -- abort markers and the index -------------------------------------------------


def test_abort_marker_indexes_the_transaction_and_read_committed_lists_it(partition, producers, directory):
    partition.append_records(plain())
    partition.append_records(producers.batch(7, 3))
    marker = partition.write_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=False)
    assert marker == 4
    assert (directory / segment_file_name(0, FileKind.TXN_INDEX)).exists()
    read = partition.read(0, 1 << 20, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert read.aborted_transactions == [AbortedTxn(7, 1, 4, 5)]
    assert read.last_stable_offset == 5


def test_read_uncommitted_lists_no_aborted_transactions(partition, producers):
    partition.append_records(producers.batch(7))
    partition.write_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=0, commit=False)
    read = partition.read(0, 1 << 20, isolation_level=IsolationLevel.READ_UNCOMMITTED, min_one_batch=True)
    assert read.aborted_transactions is None


def test_index_entry_keeps_the_lso_of_a_transaction_still_open(partition, producers):
    partition.append_records(producers.batch(1))
    partition.append_records(producers.batch(2))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    partition.write_txn_marker(producer_id=2, producer_epoch=0, coordinator_epoch=0, commit=False)
    assert partition.log.collect_aborted_transactions(0, 4) == [AbortedTxn(1, 0, 2, 1), AbortedTxn(2, 1, 3, 4)]


def test_read_lists_only_aborts_overlapping_the_returned_batches(partition, producers):
    partition.append_records(producers.batch(1))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    partition.append_records(plain())
    partition.append_records(producers.batch(2))
    partition.write_txn_marker(producer_id=2, producer_epoch=0, coordinator_epoch=0, commit=False)
    one_batch = partition.read(2, 1, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert one_batch.slice.last_offset == 2
    assert one_batch.aborted_transactions == []
    rest = partition.read(3, 1 << 20, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert [txn.producer_id for txn in rest.aborted_transactions] == [2]


def test_empty_read_committed_read_lists_nothing(partition, producers):
    partition.append_records(producers.batch(1))
    read = partition.read(0, 1 << 20, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert read.slice.size == 0
    assert read.aborted_transactions == []


def test_transaction_aborted_segments_later_is_listed_for_a_fetch_where_it_began(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(producers.batch(1))
    for _ in range(40):
        partition.append_records(plain(3))
    assert partition.log.local_log.number_of_segments >= 2
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    read = partition.read(0, 200, isolation_level=IsolationLevel.READ_COMMITTED, min_one_batch=True)
    assert read.slice.first_offset == 0
    assert [txn.producer_id for txn in read.aborted_transactions] == [1]


def test_marker_for_a_producer_without_an_open_transaction_changes_nothing(partition, producers):
    partition.append_records(producers.batch(1))
    offset = partition.write_txn_marker(producer_id=9, producer_epoch=0, coordinator_epoch=0, commit=False)
    assert offset == 1
    assert partition.last_stable_offset == 0
    assert partition.log.collect_aborted_transactions(0, 10) == []


# -- refusals -----------------------------------------------------------------------


def test_marker_with_a_stale_producer_epoch_is_refused_and_not_written(partition, producers):
    partition.append_records(producers.batch(7, epoch=3))
    with pytest.raises(InvalidProducerEpochError):
        partition.write_txn_marker(producer_id=7, producer_epoch=2, coordinator_epoch=0, commit=False)
    assert partition.log_end_offset == 1
    assert partition.last_stable_offset == 0


def test_marker_under_a_newer_producer_epoch_closes_the_transaction(partition, producers):
    partition.append_records(producers.batch(7, epoch=3))
    partition.write_txn_marker(producer_id=7, producer_epoch=4, coordinator_epoch=0, commit=False)
    assert partition.last_stable_offset == 2
    assert partition.log.producer_state.last_entry(7).producer_epoch == 4


def test_marker_from_an_older_coordinator_is_refused(partition, producers):
    partition.append_records(producers.batch(7))
    partition.write_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=5, commit=True)
    partition.append_records(producers.batch(7))
    with pytest.raises(TransactionCoordinatorFencedError):
        partition.write_txn_marker(producer_id=7, producer_epoch=0, coordinator_epoch=4, commit=True)


def test_client_may_not_write_a_control_batch(partition):
    marker = build_control_batch(ControlType.COMMIT, 7, 0, 0, timestamp=NOW)
    with pytest.raises(ControlBatchFromClientError) as refused:
        partition.append_records(marker)
    assert refused.value.error_code == 87  # INVALID_RECORD
    assert partition.log_end_offset == 0


def test_coordinator_writes_transactional_batches_without_sequences(partition):
    batch = build_batch(
        [Record(offset=0, timestamp=NOW, key=b"k", value=b"v")],
        producer_id=5, producer_epoch=1, base_sequence=NO_SEQUENCE, is_transactional=True,
    )
    partition.append_records(batch, origin=AppendOrigin.COORDINATOR)
    partition.append_records(batch, origin=AppendOrigin.COORDINATOR)
    assert partition.last_stable_offset == 0
    with pytest.raises(InvalidTxnStateError):
        plain_with_pid = build_batch(
            [Record(offset=0, timestamp=NOW, key=b"k", value=b"v")],
            producer_id=5, producer_epoch=1, base_sequence=NO_SEQUENCE,
        )
        partition.append_records(plain_with_pid, origin=AppendOrigin.COORDINATOR)


# -- recovery -----------------------------------------------------------------------


def txn_index_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.txnindex"))


def aborted_everywhere(partition: Partition) -> list[AbortedTxn]:
    return partition.log.collect_aborted_transactions(0, partition.log_end_offset)


def test_reopen_after_a_kill_rebuilds_a_lost_index_entry(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(producers.batch(1, 2))
    partition.append_records(producers.batch(2))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    expected = aborted_everywhere(partition)
    assert expected == [AbortedTxn(1, 0, 3, 2)]
    # Killed: no checkpoint, so no snapshot at the log end; the entry never reached the disk.
    for path in txn_index_files(directory):
        path.unlink()
    reopened = open_partition(directory, clock)
    assert aborted_everywhere(reopened) == expected
    assert reopened.last_stable_offset == 2


def test_reopen_does_not_duplicate_entries_that_survived(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(producers.batch(1))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    partition.append_records(producers.batch(1))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    expected = aborted_everywhere(partition)
    reopened = open_partition(directory, clock)
    assert aborted_everywhere(reopened) == expected
    assert len(expected) == 2


def test_reopen_from_a_snapshot_inside_the_transaction_rebuilds_its_entry(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(plain())
    partition.append_records(producers.batch(1, 2))
    partition.checkpoint()  # the snapshot holds the open transaction
    partition.append_records(producers.batch(1))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    for path in txn_index_files(directory):
        path.unlink()
    reopened = open_partition(directory, clock)
    assert aborted_everywhere(reopened) == [AbortedTxn(1, 1, 4, 5)]


def test_corrupt_index_below_the_snapshot_is_rebuilt_from_the_whole_log(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(producers.batch(1))
    partition.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    partition.append_records(plain())
    partition.checkpoint()  # snapshot at the log end: nothing would be replayed
    (path,) = txn_index_files(directory)
    path.write_bytes(b"\x00\x07" + path.read_bytes()[2:])
    reopened = open_partition(directory, clock)
    assert aborted_everywhere(reopened) == [AbortedTxn(1, 0, 1, 2)]
    assert reopened.log.local_log.txn_index_lost_from is None
    assert reopened.log.producer_state.last_entry(1).producer_epoch == 0


def test_clean_reopen_keeps_open_transactions_and_the_lso(directory, clock, producers):
    partition = open_partition(directory, clock)
    partition.append_records(plain())
    partition.append_records(producers.batch(1))
    partition.checkpoint()
    reopened = open_partition(directory, clock)
    assert reopened.last_stable_offset == 1
    reopened.write_txn_marker(producer_id=1, producer_epoch=0, coordinator_epoch=0, commit=False)
    assert aborted_everywhere(reopened) == [AbortedTxn(1, 1, 2, 3)]
