"""The server's contract with one connection: ordering, acks=0, idempotence, long poll."""

from __future__ import annotations

import time

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch, decode_batch


def create_topic(raw, name: str, partitions: int = 1) -> None:
    body = CreateTopicsRequest(
        topics=[CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1,
                                                   assignments=[], configs=[])],
        timeout_ms=5000,
    )
    result = raw.call(ApiKey.CREATE_TOPICS, 4, body)
    assert result.topics[0].error_code == ErrorCode.NONE


def produce(raw, topic: str, batch: bytes, acks: int = -1):
    body = ProduceRequest(
        acks=acks,
        timeout_ms=5000,
        topic_data=[ProduceRequest.TopicProduceData(
            name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)])],
    )
    return body


def fetch_request(topic: str, offset: int, *, max_wait_ms: int = 0, min_bytes: int = 1):
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
            FetchRequest.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[],
    )


def records(*values: bytes) -> list[Record]:
    return [Record(offset=i, timestamp=1_700_000_000_000 + i, key=None, value=v) for i, v in enumerate(values)]


def test_pipelined_responses_come_back_in_request_order(raw):
    create_topic(raw, "ordering")
    slow = raw.send(ApiKey.FETCH, 11, fetch_request("ordering", 0, max_wait_ms=300))
    fast = raw.send(ApiKey.API_VERSIONS, 2, ApiVersionsRequest())
    assert raw.receive().correlation_id == slow
    assert raw.receive().correlation_id == fast


def test_acks_zero_produce_gets_no_response_but_is_appended(raw):
    create_topic(raw, "fire-and-forget")
    raw.send(ApiKey.PRODUCE, 7, produce(raw, "fire-and-forget", build_batch(records(b"a", b"b")), acks=0))
    marker = raw.send(ApiKey.API_VERSIONS, 2, ApiVersionsRequest())
    assert raw.receive().correlation_id == marker
    fetched = raw.call(ApiKey.FETCH, 11, fetch_request("fire-and-forget", 0)).responses[0].partitions[0]
    assert fetched.high_watermark == 2


def test_long_poll_fetch_is_woken_by_an_append(raw, broker):
    from tests.support.raw_client import RawClient

    create_topic(raw, "long-poll")
    waiting = RawClient(broker.bootstrap_servers, timeout=10)
    try:
        started = time.monotonic()
        waiting.send(ApiKey.FETCH, 11, fetch_request("long-poll", 0, max_wait_ms=5000))
        time.sleep(0.2)
        raw.call(ApiKey.PRODUCE, 7, produce(raw, "long-poll", build_batch(records(b"wake"))))
        answer = waiting.receive().body.responses[0].partitions[0]
        assert time.monotonic() - started < 3
        assert decode_batch(bytes(answer.records)).records[0].value == b"wake"
    finally:
        waiting.close()


def test_retried_idempotent_batch_is_acknowledged_with_its_original_offset(raw):
    create_topic(raw, "idempotence")
    ids = raw.call(ApiKey.INIT_PRODUCER_ID, 1, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000))
    assert ids.error_code == ErrorCode.NONE
    pid = ids.producer_id
    first = build_batch(records(b"1", b"2"), producer_id=pid, producer_epoch=0, base_sequence=0)
    second = build_batch(records(b"3"), producer_id=pid, producer_epoch=0, base_sequence=2)
    answers = [raw.call(ApiKey.PRODUCE, 7, produce(raw, "idempotence", b)).responses[0].partition_responses[0]
               for b in (first, second, first)]
    assert [a.error_code for a in answers] == [ErrorCode.NONE] * 3
    assert [a.base_offset for a in answers] == [0, 2, 0]
    fetched = raw.call(ApiKey.FETCH, 11, fetch_request("idempotence", 0)).responses[0].partitions[0]
    assert fetched.high_watermark == 3


@pytest.mark.parametrize(
    "base_sequence, epoch, expected",
    [(5, 0, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER), (0, -5, ErrorCode.INVALID_PRODUCER_EPOCH)],
    ids=["sequence-gap", "stale-epoch"],
)
def test_idempotence_violations_get_kafka_error_codes(raw, base_sequence, epoch, expected):
    topic = f"idempotence-{expected.name.lower()}"
    create_topic(raw, topic)
    pid = raw.call(ApiKey.INIT_PRODUCER_ID, 1, InitProducerIdRequest(transactional_id=None,
                                                                     transaction_timeout_ms=60000)).producer_id
    ok = build_batch(records(b"x"), producer_id=pid, producer_epoch=0, base_sequence=0)
    assert raw.call(ApiKey.PRODUCE, 7, produce(raw, topic, ok)).responses[0].partition_responses[0].error_code == 0
    bad = build_batch(records(b"y"), producer_id=pid, producer_epoch=epoch, base_sequence=base_sequence)
    answer = raw.call(ApiKey.PRODUCE, 7, produce(raw, topic, bad)).responses[0].partition_responses[0]
    assert answer.error_code == expected


def test_corrupt_batch_is_refused_and_the_connection_keeps_working(raw):
    create_topic(raw, "corrupt")
    batch = bytearray(build_batch(records(b"payload")))
    batch[-1] ^= 0xFF
    answer = raw.call(ApiKey.PRODUCE, 7, produce(raw, "corrupt", bytes(batch))).responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.CORRUPT_MESSAGE
    fetched = raw.call(ApiKey.FETCH, 11, fetch_request("corrupt", 0)).responses[0].partitions[0]
    assert fetched.error_code == ErrorCode.NONE and fetched.high_watermark == 0


def test_clients_cannot_produce_to_or_delete_internal_topics(raw):
    from spate.protocol.messages.delete_topics import DeleteTopicsRequest

    answer = raw.call(ApiKey.PRODUCE, 7, produce(raw, "__consumer_offsets", build_batch(records(b"x"))))
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    deleted = raw.call(ApiKey.DELETE_TOPICS, 3, DeleteTopicsRequest(topic_names=["__consumer_offsets"], timeout_ms=5000))
    assert deleted.responses[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
