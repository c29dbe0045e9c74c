"""The transaction coordinator's protocol: ids, epochs, fencing, ending transactions, recovery."""

from __future__ import annotations

from broker_core.coordinator.transaction import TxnState
from broker_core.coordinator.transaction.txn_metadata import MAX_PRODUCER_EPOCH
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.transaction.txn_harness import CONFIG, TIMEOUT_MS, TxnHarness, tp

E = ErrorCode
S = TxnState


# --- InitProducerId --------------------------------------------------------------------------


def test_new_transactional_id_gets_a_producer_id_at_epoch_zero():
    h = TxnHarness()
    producer_id, epoch = h.init()
    assert epoch == 0
    assert h.state() is S.EMPTY
    assert h.coordinator.describe("txn-1").producer_id == producer_id


def test_reinitialising_keeps_the_producer_id_and_bumps_the_epoch():
    h = TxnHarness()
    first = h.init()
    second = h.init()
    assert second == (first[0], first[1] + 1)


def test_timeout_above_the_broker_maximum_is_refused():
    h = TxnHarness()
    result = h.coordinator.init_producer_id("txn-1", CONFIG.max_timeout_ms + 1)
    assert result.error is E.INVALID_TRANSACTION_TIMEOUT
    assert h.coordinator.describe("txn-1") is None


def test_empty_transactional_id_is_an_invalid_request():
    assert TxnHarness().coordinator.init_producer_id("", TIMEOUT_MS).error is E.INVALID_REQUEST


def test_an_exhausted_epoch_moves_to_a_new_producer_id():
    h = TxnHarness()
    producer_id, _ = h.init()
    for _ in range(MAX_PRODUCER_EPOCH):
        h.init()
    new_id, epoch = h.init()
    assert new_id != producer_id and epoch == 0


def test_state_topic_write_failure_is_reported_and_nothing_is_cached():
    h = TxnHarness()
    h.init()
    h.topic.fail_with = E.NOT_ENOUGH_REPLICAS
    assert h.coordinator.init_producer_id("txn-2", TIMEOUT_MS).error is E.COORDINATOR_NOT_AVAILABLE
    assert h.coordinator.describe("txn-2") is None


# --- AddPartitionsToTxn / AddOffsetsToTxn ----------------------------------------------------


def test_first_added_partition_starts_the_transaction():
    h = TxnHarness()
    producer = h.init()
    assert h.add(producer, tp("orders", 0), tp("payments", 1)) is E.NONE
    txn = h.coordinator.describe("txn-1")
    assert txn.state is S.ONGOING
    assert txn.partitions == {tp("orders", 0), tp("payments", 1)}
    assert txn.start_ms == h.scheduler.now


def test_unknown_partition_fails_the_whole_request_and_adds_nothing():
    h = TxnHarness()
    producer = h.init()
    errors = h.coordinator.add_partitions("txn-1", *producer, [tp("orders", 0), tp("orders", 9), tp("nope", 0)])
    assert errors == {
        tp("orders", 0): E.OPERATION_NOT_ATTEMPTED,
        tp("orders", 9): E.UNKNOWN_TOPIC_OR_PARTITION,
        tp("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert h.state() is S.EMPTY


def test_requests_with_the_wrong_identity_are_refused():
    h = TxnHarness()
    producer_id, epoch = h.init()
    assert h.add((producer_id + 1, epoch), tp("orders", 0)) is E.INVALID_PRODUCER_ID_MAPPING
    assert h.add((producer_id, epoch + 1), tp("orders", 0)) is E.PRODUCER_FENCED
    assert h.add((producer_id, epoch), tp("orders", 0), transactional_id="unknown") is E.INVALID_PRODUCER_ID_MAPPING


def test_adding_a_group_adds_its_offsets_partition():
    h = TxnHarness()
    producer = h.init()
    assert h.coordinator.add_offsets("txn-1", *producer, "copier") is E.NONE
    assert h.coordinator.describe("txn-1").partitions == {tp("__consumer_offsets", len("copier") % 4)}


def test_offset_commit_is_verified_against_the_transaction():
    h = TxnHarness()
    producer = h.init()
    assert h.coordinator.verify_offset_commit("txn-1", *producer, "copier") is E.INVALID_TXN_STATE
    h.add(producer, tp("orders", 0))
    assert h.coordinator.verify_offset_commit("txn-1", *producer, "copier") is E.INVALID_TXN_STATE
    h.coordinator.add_offsets("txn-1", *producer, "copier")
    assert h.coordinator.verify_offset_commit("txn-1", *producer, "copier") is E.NONE
    assert h.coordinator.verify_offset_commit("txn-1", producer[0], producer[1] - 1, "copier") is E.PRODUCER_FENCED
    assert h.coordinator.verify_offset_commit("other", *producer, "copier") is E.INVALID_PRODUCER_ID_MAPPING


# --- EndTxn ----------------------------------------------------------------------------------


def test_commit_prepares_then_writes_markers_then_completes():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0), tp("payments", 0))
    assert h.end(producer, commit=True) is E.NONE
    assert h.state() is S.PREPARE_COMMIT
    assert h.markers.written == []
    h.scheduler.advance(0)
    assert h.state() is S.COMPLETE_COMMIT
    markers = h.markers.for_producer(producer[0])
    assert set(markers) == {tp("orders", 0), tp("payments", 0)}
    assert all(m.commit and m.producer_epoch == producer[1] for m in markers.values())
    assert h.coordinator.describe("txn-1").partitions == frozenset()


def test_abort_writes_abort_markers():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 1))
    assert h.end(producer, commit=False) is E.NONE
    h.scheduler.advance(0)
    assert h.state() is S.COMPLETE_ABORT
    assert not h.markers.for_producer(producer[0])[tp("orders", 1)].commit


def test_end_txn_answers_follow_kafkas_table():
    h = TxnHarness()
    producer = h.init()
    assert h.end(producer, commit=True) is E.INVALID_TXN_STATE  # Empty: nothing to end
    h.add(producer, tp("orders", 0))
    h.end(producer, commit=True)
    assert h.end(producer, commit=True) is E.CONCURRENT_TRANSACTIONS  # still writing markers
    assert h.end(producer, commit=False) is E.INVALID_TXN_STATE
    assert h.add(producer, tp("orders", 1)) is E.CONCURRENT_TRANSACTIONS
    h.scheduler.advance(0)
    assert h.end(producer, commit=True) is E.NONE  # a retry of the finished commit
    assert h.end(producer, commit=False) is E.INVALID_TXN_STATE


def test_next_transaction_starts_from_a_completed_one():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0))
    h.end(producer, commit=True)
    h.scheduler.advance(0)
    assert h.add(producer, tp("payments", 1)) is E.NONE
    assert h.coordinator.describe("txn-1").partitions == {tp("payments", 1)}


def test_markers_for_an_unavailable_partition_are_retried_until_written():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0), tp("orders", 1))
    h.markers.unavailable = {tp("orders", 1)}
    h.end(producer, commit=True)
    h.scheduler.advance(0)
    assert h.state() is S.PREPARE_COMMIT
    h.markers.unavailable = set()
    h.scheduler.advance(500)
    assert h.state() is S.COMPLETE_COMMIT
    assert [t for t, _ in h.markers.written] == [tp("orders", 0), tp("orders", 1)]


# --- fencing and timeouts --------------------------------------------------------------------


def test_a_new_instance_fences_the_old_one_and_aborts_its_transaction():
    h = TxnHarness()
    old = h.init()
    h.add(old, tp("orders", 0))
    assert h.coordinator.init_producer_id("txn-1", TIMEOUT_MS).error is E.CONCURRENT_TRANSACTIONS
    assert h.state() is S.PREPARE_ABORT
    h.scheduler.advance(0)
    marker = h.markers.for_producer(old[0])[tp("orders", 0)]
    assert not marker.commit and marker.producer_epoch == old[1] + 1
    new = h.init()
    assert new == (old[0], old[1] + 2)
    assert h.end(old, commit=True) is E.PRODUCER_FENCED
    assert h.add(old, tp("orders", 1)) is E.PRODUCER_FENCED


def test_transaction_past_its_timeout_is_aborted_and_its_producer_fenced():
    h = TxnHarness()
    producer = h.init(timeout_ms=5_000)
    h.add(producer, tp("orders", 2))
    h.scheduler.advance(4_000)
    assert h.state() is S.ONGOING
    h.scheduler.advance(2_000)
    assert h.state() is S.COMPLETE_ABORT
    assert h.markers.for_producer(producer[0])[tp("orders", 2)].producer_epoch == producer[1] + 1
    assert h.end(producer, commit=True) is E.PRODUCER_FENCED


def test_idle_ids_expire_with_a_tombstone():
    h = TxnHarness()
    h.init()
    h.scheduler.advance(CONFIG.id_expiration_ms + CONFIG.remove_expired_interval_ms)
    assert h.coordinator.describe("txn-1") is None
    assert h.topic.records()[-1].value is None
    assert h.restarted().coordinator.describe("txn-1") is None


# --- restarts --------------------------------------------------------------------------------


def test_state_survives_a_restart():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0))
    again = h.restarted()
    txn = again.coordinator.describe("txn-1")
    assert (txn.state, txn.producer_id, txn.producer_epoch) == (S.ONGOING, *producer)
    assert txn.partitions == {tp("orders", 0)}


def test_restart_between_prepare_commit_and_markers_completes_the_commit():
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0), tp("payments", 1))
    h.end(producer, commit=True)
    # The coordinator dies before its markers go out.
    again = h.restarted()
    assert again.state() is S.PREPARE_COMMIT
    again.scheduler.advance(0)
    assert again.state() is S.COMPLETE_COMMIT
    markers = again.markers.for_producer(producer[0])
    assert set(markers) == {tp("orders", 0), tp("payments", 1)} and all(m.commit for m in markers.values())


def test_restart_during_an_open_transaction_leaves_it_to_time_out():
    h = TxnHarness()
    producer = h.init(timeout_ms=3_000)
    h.add(producer, tp("orders", 0))
    again = h.restarted()
    again.scheduler.advance(5_000)
    assert again.state() is S.COMPLETE_ABORT
    assert not again.markers.for_producer(producer[0])[tp("orders", 0)].commit
