"""The sender's handling of produce outcomes: ordering of idempotent retries, duplicates, resets, expiry.

The network is replaced by a fake that records each request and lets the
test answer it, and time is a number the test moves.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

from spate.client.errors import KafkaTimeoutError, NetworkError
from spate.client.net.connection import InFlightRequest
from spate.client.net.metadata import Metadata, snapshot_from_response
from spate.client.net.retry import Backoff
from spate.client.producer.accumulator import RecordAccumulator
from spate.client.producer.partitioner import DefaultPartitioner
from spate.client.producer.producer_config import ProducerConfig
from spate.client.producer.sender import Sender
from spate.client.producer.transaction_manager import TransactionManager
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.init_producer_id import InitProducerIdResponse
from spate.protocol.messages.metadata import MetadataResponse as M
from spate.protocol.messages.produce import ProduceResponse as P
from spate.records import validate_batch
from spate.structs import TopicPartition

TP = TopicPartition("t", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeNetwork:
    """Just enough of NetworkClient for the sender: one broker (node 1) that is always connected."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.metadata = Metadata(max_age=1e9, refresh_backoff=0.0, clock=clock)
        self.metadata.update(snapshot_from_response(M(
            brokers=[M.MetadataResponseBroker(node_id=1, host="h", port=1)],
            controller_id=1,
            topics=[M.MetadataResponseTopic(error_code=0, name="t", partitions=[
                M.MetadataResponsePartition(error_code=0, partition_index=0, leader_id=1, replica_nodes=[1], isr_nodes=[1])
            ])],
        )), clock())
        self.metadata_requests = 0
        self.sent: list[InFlightRequest] = []
        self._callbacks: dict[int, Any] = {}
        self.backoff = Backoff(0, 0)

    def maybe_update_metadata(self, now: float) -> float:
        if self.metadata.update_requested:
            self.metadata_requests += 1
            self.metadata.update(self.metadata.snapshot, now)
        return 1e9

    def least_loaded_node(self, now: float) -> int:
        return 1

    def is_connected(self, node: int) -> bool:
        return True

    def connect_delay(self, node: int, now: float) -> float:
        return 0.0

    def in_flight_count(self, node: int) -> int:
        return sum(1 for r in self.sent if not r.done and r.api_key == ApiKey.PRODUCE)

    def send(self, node, api_key, body, *, context=None, callback=None, **_: Any) -> InFlightRequest:
        request = InFlightRequest(node, ApiKey(api_key), 0, body, self.clock() + 30, True, context)
        self.sent.append(request)
        self._callbacks[id(request)] = callback
        return request

    def answer(self, request: InFlightRequest, response: Any = None, error: BaseException | None = None) -> None:
        if error is not None:
            request.fail(error)
        else:
            request.complete(response)
        self._callbacks.pop(id(request))(request)

    def poll(self, timeout: float) -> list[InFlightRequest]:
        return []

    def wakeup(self) -> None:
        pass

    def disconnect_all(self) -> None:
        pass

    def close(self) -> None:
        pass

    def produce_requests(self) -> list[InFlightRequest]:
        return [r for r in self.sent if r.api_key == ApiKey.PRODUCE]


class Harness:
    def __init__(self, idempotent: bool = True, delivery_timeout: float = 120.0) -> None:
        self.clock = Clock()
        self.network = FakeNetwork(self.clock)
        self.accumulator = RecordAccumulator(batch_size=100, linger=0.0, delivery_timeout=delivery_timeout)
        self.lock = threading.Lock()
        self.transactions = TransactionManager() if idempotent else None
        self.done = []
        self.sender = Sender(
            network=self.network,  # type: ignore[arg-type]
            accumulator=self.accumulator,
            lock=self.lock,
            partitioner=DefaultPartitioner(),
            transactions=self.transactions,
            config=ProducerConfig(
                acks=-1,
                request_timeout_ms=30_000,
                max_request_size=1 << 20,
                max_in_flight_requests_per_connection=5,
                retries=1000,
            ),
            backoff=Backoff(0, 0),
            on_batch_done=self.done.append,
            on_fatal_error=lambda error: None,
            clock=self.clock,
        )

    def init_producer_id(self, producer_id: int = 500) -> None:
        self.sender.run_once()
        request = self.network.sent[-1]
        assert request.api_key == ApiKey.INIT_PRODUCER_ID
        self.network.answer(request, InitProducerIdResponse(error_code=0, producer_id=producer_id, producer_epoch=0))

    def send_batch(self, value: bytes = b"x" * 120) -> Future:
        future: Future = Future()
        self.accumulator.append(TP, 1, None, value, (), future, self.clock())
        return future

    def step(self) -> None:
        self.sender.run_once()


def ok(base_offset: int) -> P:
    return reply(ErrorCode.NONE, base_offset)


def reply(code: ErrorCode, base_offset: int = -1) -> P:
    return P(responses=[P.TopicProduceResponse(name="t", partition_responses=[
        P.PartitionProduceResponse(index=0, error_code=code, base_offset=base_offset)
    ])])


def sequence_of(request: InFlightRequest) -> tuple[int, int]:
    records = request.body.topic_data[0].partition_data[0].records
    header = validate_batch(bytes(records))
    return header.producer_id, header.base_sequence


def test_an_idempotent_producer_gets_its_id_before_sending_anything() -> None:
    h = Harness()
    h.send_batch()
    h.step()
    assert [r.api_key for r in h.network.sent] == [ApiKey.INIT_PRODUCER_ID]
    h.network.answer(h.network.sent[0], InitProducerIdResponse(error_code=0, producer_id=77, producer_epoch=0))
    h.step()
    assert sequence_of(h.network.produce_requests()[0]) == (77, 0)


def test_init_producer_id_is_sent_once_while_unanswered_and_again_after_a_retriable_refusal() -> None:
    h = Harness()
    h.send_batch()
    h.step()
    h.step()
    assert [r.api_key for r in h.network.sent] == [ApiKey.INIT_PRODUCER_ID]
    h.network.answer(h.network.sent[0], InitProducerIdResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                                               producer_id=-1, producer_epoch=-1))
    h.step()
    assert [r.api_key for r in h.network.sent] == [ApiKey.INIT_PRODUCER_ID] * 2
    assert not h.network.produce_requests()


def test_retries_after_a_failure_go_out_in_sequence_order_one_at_a_time() -> None:
    h = Harness()
    h.init_producer_id()
    futures = [h.send_batch() for _ in range(3)]
    for _ in range(3):
        h.step()
    first, second, third = h.network.produce_requests()
    assert [sequence_of(r)[1] for r in (first, second, third)] == [0, 1, 2]
    # The leader moved: the first fails retriably, the later two are out of order behind it.
    h.network.answer(first, reply(ErrorCode.NOT_LEADER_OR_FOLLOWER))
    h.step()
    assert len(h.network.produce_requests()) == 3, "a retry waits while its partition has requests in flight"
    h.network.answer(second, reply(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER))
    h.network.answer(third, reply(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER))
    resent = []
    for base_offset in (10, 11, 12):
        h.step()
        h.step()  # a second look must not send the next retry while this one is in flight
        request = h.network.produce_requests()[-1]
        resent.append(sequence_of(request)[1])
        h.network.answer(request, ok(base_offset))
    assert resent == [0, 1, 2]
    assert [f.result().offset for f in futures] == [10, 11, 12]
    assert h.network.metadata_requests >= 1


def test_a_duplicate_is_acknowledged_without_an_offset() -> None:
    h = Harness()
    h.init_producer_id()
    future = h.send_batch()
    h.step()
    h.network.answer(h.network.produce_requests()[0], reply(ErrorCode.DUPLICATE_SEQUENCE_NUMBER))
    assert future.result().offset == -1


def test_a_lost_connection_resends_the_same_sequence() -> None:
    h = Harness()
    h.init_producer_id()
    future = h.send_batch()
    h.step()
    first = h.network.produce_requests()[0]
    h.network.answer(first, error=NetworkError("connection reset"))
    h.step()
    retry = h.network.produce_requests()[1]
    assert sequence_of(retry) == sequence_of(first)
    h.network.answer(retry, ok(5))
    assert future.result().offset == 5


def test_a_batch_that_fails_for_good_resets_the_producer_id_for_the_batches_behind_it() -> None:
    h = Harness()
    h.init_producer_id(500)
    doomed = h.send_batch()
    h.step()
    behind = h.send_batch()
    h.network.answer(h.network.produce_requests()[0], reply(ErrorCode.INVALID_RECORD))
    with pytest.raises(KafkaError) as raised:
        doomed.result()
    assert raised.value.code == ErrorCode.INVALID_RECORD
    assert not h.transactions.has_producer_id
    h.init_producer_id(600)
    h.step()
    assert sequence_of(h.network.produce_requests()[-1]) == (600, 0)
    h.network.answer(h.network.produce_requests()[-1], ok(1))
    assert behind.result().offset == 1


def test_out_of_order_for_the_oldest_unacknowledged_batch_is_a_real_gap() -> None:
    h = Harness()
    h.init_producer_id()
    future = h.send_batch()
    h.step()
    h.network.answer(h.network.produce_requests()[0], reply(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER))
    with pytest.raises(KafkaError) as raised:
        future.result()
    assert raised.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_retriable_failures_past_the_delivery_timeout_fail_with_a_timeout_naming_the_last_error() -> None:
    h = Harness(delivery_timeout=10.0)
    h.init_producer_id()
    future = h.send_batch()
    h.step()
    h.clock.now += 11
    h.network.answer(h.network.produce_requests()[0], reply(ErrorCode.NOT_ENOUGH_REPLICAS))
    with pytest.raises(KafkaTimeoutError, match="NOT_ENOUGH_REPLICAS"):
        future.result()


def test_queued_batches_expire_after_the_delivery_timeout() -> None:
    h = Harness(delivery_timeout=10.0)
    future = h.send_batch()  # no producer id yet, so nothing is sent
    h.clock.now += 10
    h.step()
    with pytest.raises(KafkaTimeoutError, match="expired"):
        future.result()


def test_without_idempotence_batches_carry_no_producer_id() -> None:
    h = Harness(idempotent=False)
    future = h.send_batch()
    h.step()
    request = h.network.produce_requests()[0]
    assert sequence_of(request) == (-1, -1)
    h.network.answer(request, ok(0))
    assert future.result().offset == 0
