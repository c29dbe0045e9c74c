"""The rules a batch is checked against before an append (producer_state/append.py)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings

from broker_core.storage.producer_state import (
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    DuplicateBatch,
    EndTxnMarker,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    TransactionCoordinatorFencedError,
)
from broker_core.storage.producer_state.append import _ProducerView
from spate.records.batch import (
    NO_SEQUENCE,
)
from spate.records.control import ControlType
from tests.broker.storage.producer_state.harness import (
    ABORT,
    COMMIT,
    MAX_SEQ,
    NOW,
    Clients,
    Harness,
    batch,
    steps,
)

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


def test_producers_are_independent(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0)
    h.append(pid=1, seq=1)
    assert h.state.last_entry(1).last_seq == 1
    assert h.state.last_entry(2).last_seq == 0


def test_batch_without_producer_id_is_a_caller_error(h):
    with pytest.raises(ValueError, match="no producer id"):
        h.state.prepare_append(batch(pid=-1, seq=NO_SEQUENCE))


# -- replication and recovery origin -----------------------------------------


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


# -- multi-batch staging -----------------------------------------------------


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


# -- transactions ------------------------------------------------------------


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


# -- origins -----------------------------------------------------------------


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


def test_control_batch_needs_its_marker_and_data_batches_take_none(h):
    with pytest.raises(ValueError):
        h.state.prepare_append(batch(control=True, seq=NO_SEQUENCE))
    with pytest.raises(ValueError):
        h.state.prepare_append(batch(seq=0), ABORT)


# -- properties --------------------------------------------------------------


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
