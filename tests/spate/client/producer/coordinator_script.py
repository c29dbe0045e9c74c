"""Hand-made coordinator answers, and playing the sender against a transaction's request queue.

Shared by the tests of the transaction manager and of its request queue.
"""

from __future__ import annotations

from concurrent.futures import Future

from spate.client.producer.batch import ProducerBatch
from spate.client.producer.transaction_manager import TransactionManager
from spate.client.producer.txn_request_queue import TxnRequestQueue
from spate.client.producer.txn_requests import FindCoordinator, InitProducerId
from spate.protocol import ErrorCode
from spate.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnResponse as AP
from spate.protocol.messages.end_txn import EndTxnResponse
from spate.protocol.messages.find_coordinator import FindCoordinatorResponse
from spate.protocol.messages.init_producer_id import InitProducerIdResponse
from spate.structs import TopicPartition

E = ErrorCode
BACKOFF = 0.1


def found() -> FindCoordinatorResponse:
    return FindCoordinatorResponse(error_code=0, node_id=3, host="h", port=9092)


def init_ok(epoch: int = 0) -> InitProducerIdResponse:
    return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=42, producer_epoch=epoch)


def added(*partitions: TopicPartition, code: ErrorCode = E.NONE) -> AP:
    return AP(throttle_time_ms=0, results_by_topic_v3_and_below=[
        AP.AddPartitionsToTxnTopicResult(name=tp.topic, results_by_partition=[
            AP.AddPartitionsToTxnPartitionResult(partition_index=tp.partition, partition_error_code=code)
        ]) for tp in partitions
    ])


def ended(code: ErrorCode = E.NONE) -> EndTxnResponse:
    return EndTxnResponse(throttle_time_ms=0, error_code=code)


def step(queue: TxnRequestQueue, response, now: float = 0.0, incomplete: bool = False):
    request, _ = queue.next_request(now, incomplete)
    assert request is not None
    queue.on_response(request, response, now, BACKOFF)
    return request


def ready(txn_id: str = "tx") -> tuple[TransactionManager, TxnRequestQueue]:
    txn = TransactionManager(txn_id)
    queue = TxnRequestQueue(txn)
    result = txn.begin_init()
    assert isinstance(step(queue, found()), FindCoordinator)
    assert isinstance(step(queue, init_ok()), InitProducerId)
    assert result.done() and result.exception() is None
    return txn, queue


def numbered_batch(txn: TransactionManager, tp: TopicPartition) -> ProducerBatch:
    batch = ProducerBatch(tp, 0.0, capacity=1024)
    batch.try_append(0, None, b"v", (), Future())
    txn.assign_sequence(batch)
    return batch
