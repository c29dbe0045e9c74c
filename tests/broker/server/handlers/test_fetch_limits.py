"""The broker's own fetch limit (KIP-541) and producer-id expiry, on an embedded broker."""

from __future__ import annotations

import time

import pytest

from broker_core.server.embedded import EmbeddedBroker
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_producers import DescribeProducersRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.fetch import FetchRequest
from spate.records import Record, build_batch, decode_batch
from tests.broker.server.test_request_handling import create_topic, produce
from tests.support.raw_client import RawClient


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    overrides = {"fetch.max.bytes": "1024", "producer.id.expiration.ms": "4000",
                 "producer.id.expiration.check.interval.ms": "200"}
    with EmbeddedBroker(tmp_path_factory.mktemp("fetch-limit"), overrides) as running:
        client = RawClient(running.bootstrap_servers, timeout=10)
        yield client
        client.close()


def batch_of(first: int, value: bytes) -> bytes:
    return build_batch([Record(offset=first, timestamp=1_700_000_000_000, key=None, value=value)],
                       base_offset=first)


def fetch(raw: RawClient, topic: str, offset: int, max_bytes: int):
    body = FetchRequest(
        max_wait_ms=0, min_bytes=1, max_bytes=max_bytes,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
            FetchRequest.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[],
    )
    partition = raw.call(ApiKey.FETCH, 11, body).responses[0].partitions[0]
    assert partition.error_code == ErrorCode.NONE
    return bytes(partition.records)


def test_a_fetch_gets_no_more_than_the_brokers_fetch_max_bytes_whatever_it_asks(limited) -> None:
    create_topic(limited, "capped")
    for offset in range(4):
        response = limited.call(ApiKey.PRODUCE, 9, produce(limited, "capped", batch_of(offset, b"v" * 600)))
        assert response.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    one_batch = len(batch_of(0, b"v" * 600))
    # Asked for 10 MB, answered with what fits in 1,024 bytes: one 668-byte batch.
    assert len(fetch(limited, "capped", 0, 10 << 20)) == one_batch
    # A request asking for less than the broker's limit is held to its own.
    assert len(fetch(limited, "capped", 0, 700)) == one_batch
    # The first batch goes out whole even when it alone is over the limit, so a consumer always progresses.
    create_topic(limited, "big")
    limited.call(ApiKey.PRODUCE, 9, produce(limited, "big", batch_of(0, b"w" * 4000)))
    decoded = decode_batch(fetch(limited, "big", 0, 10 << 20))
    assert [r.value for r in decoded.records] == [b"w" * 4000]


def active_producers(raw: RawClient, topic: str) -> set[int]:
    body = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=[0])])
    partition = raw.call(ApiKey.DESCRIBE_PRODUCERS, 0, body).topics[0].partitions[0]
    assert partition.error_code == ErrorCode.NONE
    return {p.producer_id for p in partition.active_producers}


def init_and_produce(raw: RawClient, topic: str) -> int:
    pid = raw.call(ApiKey.INIT_PRODUCER_ID, 1, InitProducerIdRequest(
        transactional_id=None, transaction_timeout_ms=60000)).producer_id
    batch = build_batch([Record(offset=0, timestamp=int(time.time() * 1000), key=None, value=b"v")],
                        producer_id=pid, producer_epoch=0, base_sequence=0)
    answer = raw.call(ApiKey.PRODUCE, 9, produce(raw, topic, batch))
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    return pid


def test_producer_ids_idle_for_the_expiration_time_are_forgotten_at_the_next_check(limited) -> None:
    create_topic(limited, "producers")
    idle = init_and_produce(limited, "producers")
    assert active_producers(limited, "producers") == {idle}
    deadline = time.monotonic() + 20
    while idle in active_producers(limited, "producers"):  # producer.id.expiration.ms is 4 s here
        assert time.monotonic() < deadline, "the idle producer id was never expired"
        time.sleep(0.1)
    # A producer that just wrote is kept.
    current = init_and_produce(limited, "producers")
    assert active_producers(limited, "producers") == {current}
