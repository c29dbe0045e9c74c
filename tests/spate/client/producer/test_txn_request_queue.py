"""The request queue turns the transaction manager's needs into coordinator requests, one at a time.

No broker and no threads: each test plays the sender (see ``coordinator_script.py``).
"""

from __future__ import annotations

from types import SimpleNamespace

from spate.client.errors import ProducerFencedError, TransactionAbortableError, TransactionAbortedError
from spate.client.net.find_coordinator import CoordinatorKey
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.transaction_manager import TxnState
from spate.client.producer.txn_requests import (
    AddOffsetsToTxn,
    AddPartitionsToTxn,
    EndTxn,
    FindCoordinator,
    TxnOffsetCommit,
)
from spate.protocol import ErrorCode, KafkaError
from spate.structs import OffsetAndMetadata, TopicPartition
from tests.spate.client.producer.coordinator_script import (
    BACKOFF,
    added,
    ended,
    numbered_batch,
    ready,
    step,
)

E = ErrorCode
A = TopicPartition("t", 0)


def found_at(node: int) -> SimpleNamespace:
    return SimpleNamespace(error_code=0, error_message=None, node_id=node, host="g", port=9000 + node)


def answered(code: ErrorCode = E.NONE) -> SimpleNamespace:
    return SimpleNamespace(error_code=int(code))


def offsets_committed(code: ErrorCode = E.NONE) -> SimpleNamespace:
    part = SimpleNamespace(partition_index=A.partition, error_code=int(code))
    return SimpleNamespace(topics=[SimpleNamespace(name=A.topic, partitions=[part])])


def test_offsets_go_to_the_transaction_coordinator_then_to_the_group_coordinator_under_one_result() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    result = txn.begin_send_offsets({A: OffsetAndMetadata(5)}, "G")
    assert isinstance(step(queue, answered()), AddOffsetsToTxn)
    assert not result.done() and txn.started
    finder = step(queue, found_at(7))
    assert isinstance(finder, FindCoordinator) and finder.target == CoordinatorKey.group("G")
    commit, _ = queue.next_request(0.0, False)
    assert isinstance(commit, TxnOffsetCommit) and commit.result is result
    assert queue.coordinator_address(commit) == (7, "g", 9007)
    queue.on_response(commit, offsets_committed(), 0.0, BACKOFF)
    assert result.done() and result.exception() is None
    assert not queue.has_pending_requests()


def test_an_abort_drops_partitions_still_queued_and_ends_at_once() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    retried = step(queue, added(A, code=E.COORDINATOR_LOAD_IN_PROGRESS), now=0.0)
    assert isinstance(retried, AddPartitionsToTxn) and txn.is_adding_partitions
    aborted = txn.begin_abort()
    request, _ = queue.next_request(0.0, False)
    assert isinstance(request, EndTxn) and not request.commit
    assert isinstance(retried.result.exception(), TransactionAbortedError)
    assert not txn.is_adding_partitions
    queue.on_response(request, ended(), 0.0, BACKOFF)
    assert aborted.done() and txn.state is TxnState.READY


def test_a_queued_commit_that_can_no_longer_succeed_gives_way_to_the_abort() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    step(queue, added(A))
    commit = txn.begin_commit()
    assert queue.next_request(0.0, True) == (None, float("inf"))  # EndTxn queued behind the batches
    txn.batch_failed(numbered_batch(txn, A), KafkaError(E.NOT_ENOUGH_REPLICAS))
    assert isinstance(commit.exception(), TransactionAbortableError)
    txn.begin_abort()
    request, _ = queue.next_request(0.0, False)
    assert isinstance(request, EndTxn) and not request.commit


def test_a_fatal_error_fails_every_queued_request() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    txn.check_send(A)
    retried = step(queue, added(A, code=E.COORDINATOR_LOAD_IN_PROGRESS))  # queued again for a retry
    batch = ProducerBatch(A, 0.0, capacity=1024)
    fatal = txn.batch_failed(batch, KafkaError(E.PRODUCER_FENCED))
    assert isinstance(fatal, ProducerFencedError)
    assert queue.next_request(10.0, False) == (None, float("inf"))
    assert retried.result.exception() is fatal
    assert not queue.has_pending_requests()


def test_a_coordinator_that_cannot_be_found_fails_the_requests_waiting_for_it() -> None:
    txn, queue = ready()
    txn.begin_transaction()
    result = txn.begin_send_offsets({A: OffsetAndMetadata(5)}, "G")
    step(queue, answered())  # AddOffsetsToTxn accepted; the group's coordinator is looked up next
    step(queue, SimpleNamespace(error_code=int(E.GROUP_AUTHORIZATION_FAILED), error_message=None,
                                node_id=-1, host="", port=-1))
    assert isinstance(result.exception(), TransactionAbortableError)
    assert txn.state is TxnState.ABORTABLE_ERROR
