"""The transactional producer's state machine, driven by hand-made coordinator answers.

No broker and no threads: each test plays the sender, asking the request
queue for the manager's next request and feeding it the response a
coordinator would give (see ``coordinator_script.py``).
"""

from __future__ import annotations

import pytest

from spate.client.errors import (
    InvalidTxnStateError,
    ProducerFencedError,
    TransactionAbortableError,
)
from spate.client.net.find_coordinator import CoordinatorKey
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.transaction_manager import (
    TRANSITIONS,
    TransactionManager,
    TxnState,
)
from spate.client.producer.txn_request_queue import TxnRequestQueue
from spate.client.producer.txn_requests import (
    CONCURRENT_TRANSACTIONS_BACKOFF,
    AddPartitionsToTxn,
    EndTxn,
    FindCoordinator,
    InitProducerId,
)
from spate.protocol import ErrorCode, KafkaError
from spate.protocol.messages.init_producer_id import InitProducerIdResponse
from spate.structs import TopicPartition
from tests.spate.client.producer.coordinator_script import (
    BACKOFF,
    added,
    ended,
    found,
    init_ok,
    numbered_batch,
    ready,
    step,
)

E = ErrorCode
A, B, C = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def test_init_finds_the_coordinator_then_gets_an_id_and_is_ready() -> None:
    txn, queue = ready()
    assert (txn.state, txn.producer_id, txn.producer_epoch) == (TxnState.READY, 42, 0)
    assert queue.coordinator_address(InitProducerId(None, CoordinatorKey.transaction("tx"))) == (3, "h", 9092)


def test_init_retries_concurrent_transactions_soon_and_a_lost_coordinator_after_a_new_lookup() -> None:
    txn = TransactionManager("tx")
    queue = TxnRequestQueue(txn)
    txn.begin_init()
    step(queue, found())
    request = step(queue, InitProducerIdResponse(throttle_time_ms=0, error_code=E.CONCURRENT_TRANSACTIONS,
                                                 producer_id=-1, producer_epoch=-1), now=10.0)
    assert request.retry_at == pytest.approx(10.0 + CONCURRENT_TRANSACTIONS_BACKOFF)
    assert queue.next_request(10.0, False) == (None, pytest.approx(CONCURRENT_TRANSACTIONS_BACKOFF))
    step(queue, InitProducerIdResponse(throttle_time_ms=0, error_code=E.NOT_COORDINATOR, producer_id=-1,
                                       producer_epoch=-1), now=11.0)
    assert isinstance(step(queue, found(), now=12.0), FindCoordinator)
    step(queue, init_ok(), now=12.0)
    assert txn.state is TxnState.READY


def test_new_partitions_are_added_in_one_request_and_held_back_until_the_coordinator_agrees() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    for tp in (A, B, C):
        txn.check_send(tp)
    batch = ProducerBatch(A, 0.0, capacity=1024)
    assert not txn.can_send(batch)
    request, _ = queue.next_request(0.0, True)
    assert isinstance(request, AddPartitionsToTxn) and request.partitions == {A, B, C}
    queue.on_response(request, added(A, B, C), 0.0, BACKOFF)
    assert txn.can_send(batch)
    txn.check_send(A)
    assert queue.next_request(0.0, True) == (None, float("inf"))  # nothing new to add


def test_end_txn_waits_for_incomplete_batches_and_then_commits() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A), incomplete=True)
    result = txn.begin_commit()
    assert queue.next_request(0.0, True) == (None, float("inf"))
    request = step(queue, ended(), incomplete=False)
    assert isinstance(request, EndTxn) and request.commit
    assert result.done() and txn.state is TxnState.READY


def test_an_empty_transaction_ends_without_asking_the_coordinator() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    assert txn.begin_commit().done()
    assert queue.next_request(0.0, False) == (None, float("inf"))
    assert txn.state is TxnState.READY


def test_a_fenced_answer_is_fatal_and_every_later_call_raises_it() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A))
    result = txn.begin_commit()
    step(queue, ended(E.PRODUCER_FENCED))
    assert isinstance(result.exception(), ProducerFencedError)
    assert isinstance(txn.fatal_error, ProducerFencedError)
    with pytest.raises(ProducerFencedError):
        txn.begin_transaction()
    with pytest.raises(ProducerFencedError):
        txn.check_send(A)


def test_a_failed_batch_makes_commit_fail_and_the_abort_bumps_the_epoch_before_it_completes() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A))
    assert txn.batch_failed(numbered_batch(txn, A), KafkaError(E.MESSAGE_TOO_LARGE)) is None
    assert txn.state is TxnState.ABORTABLE_ERROR
    with pytest.raises(TransactionAbortableError):
        txn.begin_commit()
    with pytest.raises(TransactionAbortableError):
        txn.check_send(B)
    result = txn.begin_abort()
    request = step(queue, ended())
    assert isinstance(request, EndTxn) and not request.commit
    assert not result.done() and txn.state is TxnState.INITIALIZING
    assert isinstance(step(queue, init_ok(epoch=1)), InitProducerId)
    assert result.done() and (txn.state, txn.producer_epoch) == (TxnState.READY, 1)


def test_a_failure_while_committing_fails_the_pending_commit_at_once() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A))
    commit = txn.begin_commit()
    txn.batch_failed(numbered_batch(txn, A), KafkaError(E.NOT_ENOUGH_REPLICAS))
    assert isinstance(commit.exception(), TransactionAbortableError)
    txn.begin_abort()
    assert isinstance(step(queue, ended()), EndTxn)


def test_calls_out_of_order_are_invalid_txn_state() -> None:
    txn = TransactionManager("tx")
    with pytest.raises(InvalidTxnStateError):
        txn.begin_transaction()
    with pytest.raises(InvalidTxnStateError):
        txn.check_send(A)
    txn, _ = ready()
    with pytest.raises(InvalidTxnStateError):
        txn.begin_init()
    with pytest.raises(InvalidTxnStateError):
        txn.begin_commit()
    with pytest.raises(InvalidTxnStateError):
        txn.begin_abort()
    with pytest.raises(InvalidTxnStateError):
        TransactionManager().begin_init()  # no transactional id


def test_a_call_that_timed_out_is_awaited_again_and_other_calls_wait_for_it() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A))
    commit = txn.begin_commit()
    assert txn.begin_commit() is commit
    with pytest.raises(InvalidTxnStateError):
        txn.begin_abort()


def test_the_transition_table_only_reaches_ready_through_initializing_or_ending_a_transaction() -> None:
    into_ready = {state for state, targets in TRANSITIONS.items() if TxnState.READY in targets}
    assert into_ready == {TxnState.INITIALIZING, TxnState.COMMITTING, TxnState.ABORTING}
    assert TRANSITIONS[TxnState.FATAL_ERROR] == frozenset()
