"""Producer state: the idempotence and fencing rules, snapshots and recovery."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.producer_state import (
    NUM_BATCHES_TO_RETAIN,
    SNAPSHOT_VERSION,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    CorruptSnapshotError,
    DuplicateBatch,
    EndTxnMarker,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerStateEntry,
    ProducerStateManager,
    TransactionCoordinatorFencedError,
    UnknownProducerIdError,
    _ProducerView,
    decode_snapshot,
    encode_snapshot,
    snapshot_path,
)
from spate.records.batch import (
    CONTROL_MASK,
    NO_SEQUENCE,
    TRANSACTIONAL_MASK,
    BatchHeader,
)
from spate.records.control import ControlType

MAX_SEQ = 2**31 - 1
COMMIT = EndTxnMarker(ControlType.COMMIT, 0)
ABORT = EndTxnMarker(ControlType.ABORT, 0)
EXPIRATION_MS = 1_000_000
NOW = 10_000_000


class FakeClock:
    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def batch(
    *,
    pid: int = 1,
    epoch: int = 0,
    seq: int = 0,
    count: int = 1,
    offset: int = 0,
    transactional: bool = False,
    control: bool = False,
    timestamp: int = NOW,
) -> BatchHeader:
    attributes = (TRANSACTIONAL_MASK if transactional else 0) | (CONTROL_MASK if control else 0)
    return BatchHeader(
        base_offset=offset,
        batch_length=100,
        partition_leader_epoch=0,
        magic=2,
        crc=0,
        attributes=attributes,
        last_offset_delta=count - 1,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        records_count=count,
    )


class Harness:
    """A manager plus a log end offset, appending batches the way the log would."""

    def __init__(self, directory: Path, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.dir = directory
        self.state = ProducerStateManager(directory, clock=self.clock, max_producer_id_expiration_ms=EXPIRATION_MS)
        self.log_end = 0
        self.completed: CompletedTxn | None = None
        self.log: list[tuple[BatchHeader, EndTxnMarker | None]] = []

    def reopen(self) -> ProducerStateManager:
        return ProducerStateManager(self.dir, clock=self.clock, max_producer_id_expiration_ms=EXPIRATION_MS)

    def append(
        self, *, marker: EndTxnMarker | None = None, origin: AppendOrigin = AppendOrigin.CLIENT, **kwargs
    ) -> ProducerAppendInfo | DuplicateBatch:
        header = batch(offset=self.log_end, timestamp=self.clock.now, **kwargs)
        if header.is_control and marker is None:
            marker = COMMIT
        result = self.state.prepare_append(header, marker, origin=origin)
        if isinstance(result, ProducerAppendInfo):
            self.completed = self.state.complete_append(result, header.base_offset, header.last_offset, self.clock.now)
            self.log.append((header, marker))
            self.log_end = header.next_offset
        return result


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


# -- sequence and epoch rules ------------------------------------------------

# Each case: batches appended first as (epoch, seq, count), then the batch under test.
ACCEPTED = [
    ("first batch of an unknown producer at sequence 0", [], (0, 0, 1)),
    ("unknown producer resuming at a later sequence (Kafka >= 2.5)", [], (3, 57, 2)),
    ("next sequence in the same epoch", [(0, 0, 3)], (0, 3, 1)),
    ("sequence wraps from 2**31-1 to 0", [(0, MAX_SEQ - 1, 2)], (0, 0, 1)),
    ("batch spanning the wrap is followed by its successor", [(0, MAX_SEQ - 1, 3)], (0, 1, 1)),
    ("epoch bump starting at 0", [(0, 0, 5)], (1, 0, 1)),
    ("epoch jump by more than one starting at 0", [(0, 0, 5)], (7, 0, 1)),
]

REFUSED = [
    ("gap in sequence", [(0, 0, 3)], (0, 4, 1), OutOfOrderSequenceError),
    ("sequence repeats part of the last batch", [(0, 0, 3)], (0, 2, 2), OutOfOrderSequenceError),
    ("sequence far behind, not a retained batch", [(0, 0, 1), (0, 1, 1)], (0, 0, 2), OutOfOrderSequenceError),
    ("no wrap before 2**31-1", [(0, MAX_SEQ - 3, 2)], (0, 0, 1), OutOfOrderSequenceError),
    ("epoch bump not starting at 0", [(0, 0, 5)], (1, 5, 1), OutOfOrderSequenceError),
    ("stale epoch", [(2, 0, 1)], (1, 1, 1), InvalidProducerEpochError),
    ("stale epoch even at sequence 0", [(2, 0, 1)], (1, 0, 1), InvalidProducerEpochError),
]


@pytest.mark.parametrize("name, history, candidate", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_batches_that_follow_the_sequence_rules_are_accepted(h, name, history, candidate):
    for epoch, seq, count in history:
        h.append(epoch=epoch, seq=seq, count=count)
    epoch, seq, count = candidate
    result = h.append(epoch=epoch, seq=seq, count=count)
    assert isinstance(result, ProducerAppendInfo)
    entry = h.state.last_entry(1)
    assert entry.producer_epoch == epoch
    assert entry.last_seq == (seq + count - 1) % 2**31


@pytest.mark.parametrize("name, history, candidate, error", REFUSED, ids=[c[0] for c in REFUSED])
def test_batches_that_break_the_rules_are_refused_without_changing_state(h, name, history, candidate, error):
    for epoch, seq, count in history:
        h.append(epoch=epoch, seq=seq, count=count)
    before = h.state.last_entry(1)
    epoch, seq, count = candidate
    with pytest.raises(error):
        h.append(epoch=epoch, seq=seq, count=count)
    assert h.state.last_entry(1) == before


@pytest.mark.parametrize("age", range(NUM_BATCHES_TO_RETAIN))
def test_retry_of_each_of_the_last_five_batches_returns_its_original_offsets(h, age):
    for i in range(7):
        h.clock.now = NOW + i
        h.append(seq=2 * i, count=2)  # offsets 2i..2i+1
    i = 6 - age
    retry = h.state.prepare_append(batch(seq=2 * i, count=2, offset=999))
    assert retry == DuplicateBatch(
        producer_id=1,
        producer_epoch=0,
        first_seq=2 * i,
        last_seq=2 * i + 1,
        first_offset=2 * i,
        last_offset=2 * i + 1,
        timestamp=NOW + i,
    )


def test_retry_older_than_the_last_five_batches_is_out_of_order(h):
    for i in range(NUM_BATCHES_TO_RETAIN + 1):
        h.append(seq=i)
    with pytest.raises(OutOfOrderSequenceError):
        h.state.prepare_append(batch(seq=0))


def test_retry_must_match_a_batch_exactly_to_be_a_duplicate(h):
    h.append(seq=0, count=3)
    with pytest.raises(OutOfOrderSequenceError):
        h.state.prepare_append(batch(seq=0, count=2))


def test_same_sequences_under_a_newer_epoch_are_not_duplicates(h):
    h.append(epoch=0, seq=0, count=1)
    result = h.state.prepare_append(batch(epoch=1, seq=0, count=1))
    assert isinstance(result, ProducerAppendInfo)


def test_epoch_bump_forgets_the_previous_epochs_batches(h):
    h.append(epoch=0, seq=0, count=1)
    h.append(epoch=0, seq=1, count=1)
    h.append(epoch=1, seq=0, count=1)
    entry = h.state.last_entry(1)
    assert [b.first_seq for b in entry.batches] == [0]
    assert entry.producer_epoch == 1


def test_only_the_last_five_batches_are_retained_oldest_first(h):
    for i in range(8):
        h.append(seq=i)
    assert [b.first_seq for b in h.state.last_entry(1).batches] == [3, 4, 5, 6, 7]


def test_producers_are_independent(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0)
    h.append(pid=1, seq=1)
    assert h.state.last_entry(1).last_seq == 1
    assert h.state.last_entry(2).last_seq == 0


def test_complete_append_records_offsets_timestamp_and_end_offset(h):
    h.clock.now = 1234
    h.append(seq=0, count=4)
    entry = h.state.last_entry(1)
    assert entry.batches == (BatchMetadata(first_seq=0, last_seq=3, first_offset=0, last_offset=3, timestamp=1234),)
    assert entry.last_timestamp == 1234
    assert h.state.map_end_offset == 4


def test_errors_carry_kafka_error_codes():
    assert OutOfOrderSequenceError.error_code == 45
    assert InvalidProducerEpochError.error_code == 47
    assert InvalidTxnStateError.error_code == 48
    assert UnknownProducerIdError.error_code == 59
    assert not OutOfOrderSequenceError.retriable


def test_batch_without_producer_id_is_a_caller_error(h):
    with pytest.raises(ValueError, match="no producer id"):
        h.state.prepare_append(batch(pid=-1, seq=NO_SEQUENCE))


def test_complete_append_refuses_offsets_that_do_not_span_the_batch(h):
    info = h.state.prepare_append(batch(seq=0, count=3))
    with pytest.raises(ValueError, match="lastOffsetDelta"):
        h.state.complete_append(info, 10, 11, NOW)


def test_complete_append_refuses_a_batch_already_reflected_in_state(h):
    h.append(seq=0, count=5)
    info = h.state.prepare_append(batch(seq=5))
    with pytest.raises(ValueError, match="already reflected"):
        h.state.complete_append(info, 3, 3, NOW)


# -- replication and recovery origin -------------------------------------------


def test_batches_from_the_leaders_log_skip_sequence_checks(h):
    h.append(seq=0)
    info = h.state.prepare_append(batch(seq=40, offset=1), is_from_client=False)
    assert isinstance(info, ProducerAppendInfo)


def test_batches_from_the_leaders_log_with_a_lower_epoch_are_logged_not_refused(h, caplog):
    h.append(epoch=3, seq=0)
    with caplog.at_level(logging.WARNING):
        info = h.state.prepare_append(batch(epoch=2, seq=0, offset=1), is_from_client=False)
    assert isinstance(info, ProducerAppendInfo)
    assert "older than its current epoch 3" in caplog.text


def test_batches_from_the_leaders_log_are_never_reported_as_duplicates(h):
    h.append(seq=0)
    assert isinstance(h.state.prepare_append(batch(seq=0, offset=1), is_from_client=False), ProducerAppendInfo)


# -- multi-batch staging ---------------------------------------------------------


def test_staging_checks_each_batch_against_the_ones_before_it(h):
    staging = h.state.stage_append()
    assert isinstance(staging.prepare(batch(seq=0, count=2, offset=0)), ProducerAppendInfo)
    assert isinstance(staging.prepare(batch(seq=2, count=2, offset=2)), ProducerAppendInfo)
    with pytest.raises(OutOfOrderSequenceError):
        staging.prepare(batch(seq=2, count=2, offset=4))


def test_staging_a_request_whose_second_batch_fails_leaves_state_untouched(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0)
    before = dict(h.state.active_producers())
    staging = h.state.stage_append()
    staging.prepare(batch(pid=1, seq=1, offset=2))
    with pytest.raises(OutOfOrderSequenceError):
        staging.prepare(batch(pid=2, seq=5, offset=3))
    assert dict(h.state.active_producers()) == before
    assert h.state.map_end_offset == 2


def test_staging_refusal_of_a_stale_epoch_after_a_bump_in_the_same_request(h):
    h.append(epoch=0, seq=0)
    staging = h.state.stage_append()
    staging.prepare(batch(epoch=1, seq=0, offset=1))
    with pytest.raises(InvalidProducerEpochError):
        staging.prepare(batch(epoch=0, seq=1, offset=2))
    assert h.state.last_entry(1).producer_epoch == 0


def test_unknown_producer_must_stay_in_sequence_within_one_staged_request(h):
    staging = h.state.stage_append()
    staging.prepare(batch(seq=100, offset=0))
    with pytest.raises(OutOfOrderSequenceError):
        staging.prepare(batch(seq=102, offset=1))


def test_staged_batches_apply_in_order_to_the_same_state_as_single_appends(h, tmp_path):
    staging = h.state.stage_append()
    headers = [batch(seq=0, count=2, offset=0), batch(seq=2, count=1, offset=2), batch(pid=9, seq=0, offset=3)]
    infos = [staging.prepare(x) for x in headers]
    for info, x in zip(infos, headers):
        h.state.complete_append(info, x.base_offset, x.last_offset, NOW)
    single = Harness(tmp_path / "other")
    single.append(seq=0, count=2)
    single.append(seq=2, count=1)
    single.append(pid=9, seq=0)
    assert dict(h.state.active_producers()) == dict(single.state.active_producers())


# -- transactions ----------------------------------------------------------------


def test_first_transactional_batch_opens_a_transaction_at_its_offset(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=2, seq=1, transactional=True)
    assert h.state.last_entry(2).current_txn_first_offset == 1
    assert h.state.first_unstable_offset() == 1


def test_first_unstable_offset_is_the_oldest_open_transaction(h):
    h.append(pid=1, seq=0, transactional=True)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE)
    assert h.state.first_unstable_offset() == 1
    h.append(pid=2, control=True, seq=NO_SEQUENCE)
    assert h.state.first_unstable_offset() is None


def test_marker_keeps_the_batches_of_the_same_epoch(h):
    h.append(seq=0, transactional=True)
    h.append(control=True, seq=NO_SEQUENCE)
    assert isinstance(h.append(seq=1, transactional=True), ProducerAppendInfo)


def test_marker_with_a_stale_epoch_is_refused(h):
    h.append(epoch=2, seq=0, transactional=True)
    with pytest.raises(InvalidProducerEpochError):
        h.append(epoch=1, control=True, seq=NO_SEQUENCE)


def test_non_transactional_write_during_an_open_transaction_is_refused(h):
    h.append(seq=0, transactional=True)
    with pytest.raises(InvalidTxnStateError):
        h.append(seq=1)


def test_non_transactional_write_is_allowed_once_the_marker_closes_the_transaction(h):
    h.append(seq=0, transactional=True)
    h.append(control=True, seq=NO_SEQUENCE)
    assert isinstance(h.append(seq=1), ProducerAppendInfo)


def test_marker_under_a_new_epoch_restarts_sequences_at_0(h):
    h.append(epoch=0, seq=0, transactional=True)
    h.append(epoch=1, control=True, seq=NO_SEQUENCE)
    with pytest.raises(OutOfOrderSequenceError):
        h.append(epoch=1, seq=1)
    assert isinstance(h.append(epoch=1, seq=0), ProducerAppendInfo)


def test_no_transaction_is_open_without_transactional_batches(h):
    h.append(seq=0)
    assert h.state.first_unstable_offset() is None


# -- origins and completed transactions -------------------------------------------


def test_coordinator_origin_checks_no_sequence(h):
    h.append(seq=0, transactional=True)
    info = h.append(seq=NO_SEQUENCE, transactional=True, origin=AppendOrigin.COORDINATOR)
    assert isinstance(info, ProducerAppendInfo)


def test_coordinator_origin_never_answers_with_a_duplicate(h):
    h.append(seq=0, count=2)
    assert isinstance(h.append(seq=0, count=2, origin=AppendOrigin.COORDINATOR), ProducerAppendInfo)


def test_coordinator_origin_refuses_a_stale_epoch(h):
    h.append(epoch=3, seq=0)
    with pytest.raises(InvalidProducerEpochError):
        h.append(epoch=2, seq=NO_SEQUENCE, transactional=True, origin=AppendOrigin.COORDINATOR)


def test_coordinator_origin_checks_the_transaction_state(h):
    h.append(seq=0, transactional=True)
    with pytest.raises(InvalidTxnStateError):
        h.append(seq=NO_SEQUENCE, origin=AppendOrigin.COORDINATOR)


def test_replication_origin_accepts_a_stale_epoch(h):
    h.append(epoch=3, seq=0)
    assert isinstance(h.append(epoch=2, seq=9, origin=AppendOrigin.REPLICATION), ProducerAppendInfo)


@pytest.mark.parametrize("flag, origin", [(True, AppendOrigin.CLIENT), (False, AppendOrigin.REPLICATION)])
def test_is_from_client_flag_names_an_origin(h, flag, origin):
    assert h.state.stage_append(is_from_client=flag).origin is origin


def test_abort_marker_reports_the_transaction_it_closed(h):
    h.append(pid=1, seq=0)
    h.append(pid=1, seq=1, count=3, transactional=True)
    h.append(pid=1, seq=4, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed == CompletedTxn(producer_id=1, first_offset=1, last_offset=5, is_aborted=True)


def test_commit_marker_reports_a_committed_transaction(h):
    h.append(seq=0, transactional=True)
    h.append(control=True, seq=NO_SEQUENCE, marker=COMMIT)
    assert h.completed == CompletedTxn(producer_id=1, first_offset=0, last_offset=1, is_aborted=False)


def test_marker_without_an_open_transaction_completes_nothing(h):
    h.append(seq=0)
    h.append(control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed is None
    h.append(pid=9, control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed is None
    assert h.state.last_entry(9).producer_epoch == 0


def test_data_batches_complete_nothing(h):
    h.append(seq=0, transactional=True)
    assert h.completed is None


def test_marker_from_an_older_coordinator_epoch_is_fenced(h):
    h.append(seq=0, transactional=True)
    h.append(control=True, seq=NO_SEQUENCE, marker=EndTxnMarker(ControlType.COMMIT, 5))
    h.append(seq=1, transactional=True)
    with pytest.raises(TransactionCoordinatorFencedError) as refused:
        h.append(control=True, seq=NO_SEQUENCE, marker=EndTxnMarker(ControlType.ABORT, 4))
    assert refused.value.error_code == 52
    assert h.state.first_unstable_offset() == 2


def test_replicated_marker_from_an_older_coordinator_epoch_is_accepted(h):
    h.append(control=True, seq=NO_SEQUENCE, marker=EndTxnMarker(ControlType.COMMIT, 5))
    stale = EndTxnMarker(ControlType.COMMIT, 4)
    assert isinstance(h.append(control=True, seq=NO_SEQUENCE, marker=stale, origin=AppendOrigin.REPLICATION),
                      ProducerAppendInfo)


def test_coordinator_epoch_of_the_last_marker_survives_a_snapshot(h):
    h.append(control=True, seq=NO_SEQUENCE, marker=EndTxnMarker(ControlType.COMMIT, 7))
    h.state.take_snapshot(h.log_end)
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert restored.last_entry(1).coordinator_epoch == 7


def test_control_batch_needs_its_marker_and_data_batches_take_none(h):
    with pytest.raises(ValueError):
        h.state.prepare_append(batch(control=True, seq=NO_SEQUENCE))
    with pytest.raises(ValueError):
        h.state.prepare_append(batch(seq=0), ABORT)


def test_replay_reports_each_transaction_a_marker_closes(h):
    h.append(pid=1, seq=0, transactional=True)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE, marker=ABORT)
    h.append(pid=2, control=True, seq=NO_SEQUENCE, marker=COMMIT)
    h.append(pid=3, control=True, seq=NO_SEQUENCE, marker=ABORT)
    restored = h.reopen()
    restored.load(0, h.log_end)
    seen: list[CompletedTxn] = []
    restored.rebuild_from(h.log, on_completed=seen.append)
    assert seen == [CompletedTxn(1, 0, 2, True), CompletedTxn(2, 1, 3, False)]


def test_forget_state_drops_producers_but_keeps_snapshots(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.state.forget_state(0)
    assert h.state.active_producers() == {}
    assert h.state.map_end_offset == 0
    assert h.state.snapshot_offsets() == [1]


# -- expiration ------------------------------------------------------------------


def test_idle_producers_expire_but_open_transactions_keep_theirs(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.clock.now = NOW + EXPIRATION_MS - 1
    h.append(pid=3, seq=0)
    h.state.remove_expired_producers(NOW + EXPIRATION_MS)
    assert sorted(h.state.active_producers()) == [2, 3]


def test_expired_producer_may_resume_at_any_sequence(h):
    h.append(seq=0)
    h.state.remove_expired_producers(NOW + EXPIRATION_MS)
    assert isinstance(h.append(seq=41), ProducerAppendInfo)


# -- snapshots -------------------------------------------------------------------


def populate(h: Harness) -> None:
    for i in range(7):
        h.append(pid=1, seq=i)
    h.append(pid=2, epoch=4, seq=0, count=3, transactional=True)
    h.append(pid=3, seq=0)
    h.append(pid=3, control=True, seq=NO_SEQUENCE)


def test_snapshot_round_trip_restores_every_producer(h):
    populate(h)
    path = h.state.take_snapshot(h.log_end)
    assert path == snapshot_path(h.dir, h.log_end) == h.dir / f"{h.log_end:020d}.snapshot"
    restored = h.reopen()
    assert restored.load(0, h.log_end) == h.log_end
    assert dict(restored.active_producers()) == dict(h.state.active_producers())
    assert restored.map_end_offset == h.log_end
    assert restored.first_unstable_offset() == 7


def test_restored_state_still_recognises_retries(h):
    for i in range(3):
        h.append(seq=i)
    h.state.take_snapshot(h.log_end)
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert isinstance(restored.prepare_append(batch(seq=1)), DuplicateBatch)


def test_snapshot_file_layout_starts_with_version_crc_and_count(h):
    populate(h)
    data = h.state.take_snapshot(h.log_end).read_bytes()
    assert int.from_bytes(data[0:2], "big") == SNAPSHOT_VERSION
    assert int.from_bytes(data[6:10], "big") == 3
    # 10-byte header, 31 bytes per producer, 32 per retained batch (5 + 1 + 1).
    assert len(data) == 10 + 3 * 31 + 7 * 32


# Everything after the CRC field of a one-producer snapshot.
SNAPSHOT_BODY = bytes.fromhex(
    "00000001"                                     # one entry
    "0000000000000007" "0002" "00000005"           # producer 7, epoch 2, coordinator epoch 5
    "00000000000003e8" "0000000000000064" "01"     # last timestamp 1000, txn open at 100, 1 batch
    "0000000a" "0000000c"                          # sequences 10..12
    "0000000000000064" "0000000000000066"          # offsets 100..102
    "00000000000003e8"                             # timestamp 1000
)


def test_snapshot_encoding_matches_the_documented_byte_layout_both_ways():
    data = b"\x00\x01" + crc32c(SNAPSHOT_BODY).to_bytes(4, "big") + SNAPSHOT_BODY
    entry = ProducerStateEntry(
        producer_id=7,
        producer_epoch=2,
        batches=(BatchMetadata(10, 12, 100, 102, 1000),),
        coordinator_epoch=5,
        current_txn_first_offset=100,
        last_timestamp=1000,
    )
    assert encode_snapshot([entry]) == data
    assert decode_snapshot(data) == [entry]


def test_only_the_two_newest_snapshots_are_kept(h):
    for i in range(4):
        h.append(seq=i)
        h.state.take_snapshot(h.log_end)
    assert h.state.snapshot_offsets() == [3, 4]


def test_corrupt_newest_snapshot_falls_back_to_the_older_one(h, caplog):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    newest = h.state.take_snapshot(2)
    data = bytearray(newest.read_bytes())
    data[-1] ^= 0xFF
    newest.write_bytes(bytes(data))
    restored = h.reopen()
    with caplog.at_level(logging.WARNING):
        assert restored.load(0, 2) == 1
    assert str(newest) in caplog.text
    assert restored.last_entry(1).last_seq == 0
    assert restored.snapshot_offsets() == [1]


def test_torn_snapshot_falls_back_to_replaying_from_log_start(h):
    h.append(seq=0)
    path = h.state.take_snapshot(1)
    path.write_bytes(path.read_bytes()[:7])
    restored = h.reopen()
    assert restored.load(0, 1) == 0
    assert restored.active_producers() == {}


def test_snapshots_beyond_the_log_end_are_ignored_and_deleted(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    h.state.take_snapshot(2)
    restored = h.reopen()
    assert restored.load(0, 1) == 1
    assert restored.snapshot_offsets() == [1]


def test_snapshots_below_the_log_start_are_ignored_and_deleted(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    restored = h.reopen()
    assert restored.load(5, 9) == 5
    assert restored.snapshot_offsets() == []
    assert restored.map_end_offset == 5


def test_load_drops_producers_expired_while_the_broker_was_down(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.state.take_snapshot(h.log_end)
    h.clock.now = NOW + EXPIRATION_MS
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert list(restored.active_producers()) == [2]


def test_load_removes_a_temp_file_left_by_a_crash(h):
    (h.dir / f"{5:020d}.snapshot.tmp").write_bytes(b"partial")
    h.state.load(0, 0)
    assert list(h.dir.iterdir()) == []


def test_snapshot_below_the_state_end_offset_is_refused(h):
    h.append(seq=0, count=3)
    with pytest.raises(ValueError):
        h.state.take_snapshot(2)


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda d: d[:5], "shorter than"),
        (lambda d: b"\x00\x09" + d[2:], "unknown version"),
        (lambda d: d[:6] + bytes([d[6] ^ 1]) + d[7:], "CRC mismatch"),
    ],
    ids=["truncated header", "unknown version", "bit flip"],
)
def test_decode_rejects_damaged_snapshots(mutate, reason):
    data = encode_snapshot([ProducerStateEntry(1, 0, (BatchMetadata(0, 0, 0, 0, 1),), last_timestamp=1)])
    with pytest.raises(CorruptSnapshotError, match=reason):
        decode_snapshot(mutate(data), source="x.snapshot")


def test_decode_rejects_a_crc_valid_file_with_a_bad_layout():
    good = encode_snapshot([ProducerStateEntry(1, 0, last_timestamp=1)])
    for body, reason in [(good[6:] + b"\x00", "trailing bytes"), (b"\x00\x00\x00\x02" + good[10:], "truncated")]:
        data = good[:2] + crc32c(body).to_bytes(4, "big") + body
        with pytest.raises(CorruptSnapshotError, match=reason):
            decode_snapshot(data)


# -- truncation ------------------------------------------------------------------


def test_truncate_and_reload_rewinds_to_the_newest_snapshot_at_or_below_the_new_end(h):
    for i in range(3):
        h.append(seq=i)
        h.state.take_snapshot(h.log_end)  # snapshots at 2 and 3 survive
    h.append(seq=3)
    replay_from = h.state.truncate_and_reload(0, 2)
    assert replay_from == 2
    assert h.state.snapshot_offsets() == [2]
    assert h.state.last_entry(1).last_seq == 1
    assert isinstance(h.state.prepare_append(batch(seq=2, offset=2)), ProducerAppendInfo)


def test_truncate_and_reload_keeps_state_that_already_ends_at_the_log_end(h):
    h.append(seq=0)
    h.append(seq=1)
    assert h.state.truncate_and_reload(1, 2) == 2
    assert h.state.last_entry(1).last_seq == 1


def test_truncate_and_reload_then_replay_rebuilds_the_truncated_state(h):
    for i in range(6):
        h.append(seq=i)
        if i == 1:
            h.state.take_snapshot(h.log_end)
    replay_from = h.state.truncate_and_reload(0, 4)
    h.state.rebuild_from(x for x in h.log if replay_from <= x[0].base_offset < 4)
    assert h.state.last_entry(1).last_seq == 3
    assert h.state.map_end_offset == 4


def test_truncate_fully_forgets_producers_and_snapshots(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.state.truncate_fully_and_start_at(100)
    assert h.state.active_producers() == {}
    assert h.state.snapshot_offsets() == []
    assert h.state.map_end_offset == 100
    h.log_end = 100
    assert isinstance(h.append(seq=5), ProducerAppendInfo)


def test_rebuild_skips_batches_already_in_the_snapshot_and_advances_past_others(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    no_pid = batch(pid=-1, epoch=-1, seq=NO_SEQUENCE, offset=2, count=3)
    restored = h.reopen()
    restored.load(0, 5)
    restored.rebuild_from(h.log + [(no_pid, None)])
    assert restored.last_entry(1).last_seq == 1
    assert restored.map_end_offset == 5


# -- properties ------------------------------------------------------------------

# A step: (producer id, action, record count).
steps = st.lists(
    st.tuples(
        st.integers(1, 3),
        st.sampled_from(["next", "next", "retry", "bump", "bump_with_data", "txn", "marker"]),
        st.integers(1, 4),
    ),
    max_size=40,
)


class Clients:
    """Well-behaved idempotent and transactional producers; they never trigger a refusal."""

    def __init__(self) -> None:
        self.seqs: dict[int, int] = {}
        self.epochs: dict[int, int] = {}
        self.in_txn: dict[int, bool] = {}

    def step(self, h: Harness, pid: int, action: str, count: int) -> None:
        h.clock.now += 1
        epoch = self.epochs.setdefault(pid, 0)
        if action == "retry":
            entry = h.state.last_entry(pid)
            if entry and entry.batches and entry.producer_epoch == epoch:
                b = entry.batches[0]
                retry = batch(pid=pid, epoch=epoch, seq=b.first_seq, count=b.last_seq - b.first_seq + 1)
                result = h.state.prepare_append(retry)
                assert isinstance(result, DuplicateBatch) and result.first_offset == b.first_offset
        elif action == "bump" or (action == "bump_with_data" and self.in_txn.get(pid)):
            # The coordinator ends any transaction with a marker under the new epoch.
            self.epochs[pid], self.seqs[pid], self.in_txn[pid] = epoch + 1, 0, False
            h.append(pid=pid, epoch=epoch + 1, control=True, seq=NO_SEQUENCE)
        elif action == "bump_with_data":
            self.epochs[pid], self.seqs[pid] = epoch + 1, count
            h.append(pid=pid, epoch=epoch + 1, seq=0, count=count)
        elif action == "marker":
            self.in_txn[pid] = False
            h.append(pid=pid, epoch=epoch, control=True, seq=NO_SEQUENCE)
        else:
            txn = self.in_txn.get(pid, False) or action == "txn"
            self.in_txn[pid] = txn
            seq = self.seqs.get(pid, 0)
            h.append(pid=pid, epoch=epoch, seq=seq, count=count, transactional=txn)
            self.seqs[pid] = seq + count

    def run(self, h: Harness, plan) -> None:
        for step in plan:
            self.step(h, *step)


@settings(max_examples=100, deadline=None)
@given(plan=steps, cut=st.integers(0, 40))
def test_snapshot_plus_replay_rebuilds_exactly_the_live_state(tmp_path_factory, plan, cut):
    h = Harness(tmp_path_factory.mktemp("p"))
    clients = Clients()
    clients.run(h, plan[:cut])
    h.state.take_snapshot(h.log_end)
    clients.run(h, plan[cut:])
    restored = h.reopen()
    replay_from = restored.load(0, h.log_end)
    restored.rebuild_from(h.log)
    assert replay_from <= h.log_end
    assert dict(restored.active_producers()) == dict(h.state.active_producers())
    assert restored.first_unstable_offset() == h.state.first_unstable_offset()
    assert restored.map_end_offset == h.log_end


@settings(max_examples=100, deadline=None)
@given(plan=steps, extra=steps)
def test_staged_view_predicts_the_state_after_completion(tmp_path_factory, plan, extra):
    h = Harness(tmp_path_factory.mktemp("v"))
    Clients().run(h, plan)
    # Replay-origin staging accepts any batch, so every shape of transition is exercised.
    for pid, action, count in extra:
        header = batch(
            pid=pid,
            epoch=1 if action.startswith("bump") else 0,
            seq=count,
            count=count,
            offset=h.log_end,
            transactional=action == "txn",
            control=action == "marker",
        )
        entry = h.state.last_entry(pid)
        try:
            info = h.state.prepare_append(
                header, COMMIT if header.is_control else None, is_from_client=False
            )
        except InvalidTxnStateError:
            continue
        h.state.complete_append(info, header.base_offset, header.last_offset, NOW)
        h.log_end = header.next_offset
        assert _ProducerView.of(h.state.last_entry(pid)) == _ProducerView.of(entry).after(info)
