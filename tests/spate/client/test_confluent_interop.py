"""Spate's client and confluent-kafka (librdkafka) read each other's records and agree on partitions."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka import TopicPartition as ConfluentTopicPartition

from spate.client import Producer
from tests.spate.client.conftest import assigned_consumer, consume, create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PARTITIONS = 5
RECORDS = 400


def records() -> list[tuple[bytes, bytes | None, list[tuple[str, bytes | None]], int]]:
    base = int(time.time() * 1000) - 600_000
    out = []
    for i in range(RECORDS):
        key = f"customer-{i * 7919 % 97}".encode()
        value = None if i % 13 == 0 else f"payload {i}".encode() * (i % 5 + 1)
        headers = [("trace", uuid.UUID(int=i).bytes), ("n", str(i).encode())]
        if i % 4 == 0:
            headers.append(("trace", None))
        out.append((key, value, headers, base + (i * 37) % 5000))
    return out


def confluent_read(bootstrap: str, topic: str, expected: int) -> list[tuple]:
    consumer = ConfluentConsumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"assign-only-{uuid.uuid4().hex}",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
    })
    try:
        consumer.assign([ConfluentTopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        got = []
        deadline = time.monotonic() + 30
        while len(got) < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"confluent-kafka read {len(got)} of {expected}")
            for message in consumer.consume(num_messages=500, timeout=0.2):
                if message.error() is not None:
                    raise AssertionError(str(message.error()))
                kind, stamp = message.timestamp()
                assert kind == TIMESTAMP_CREATE_TIME
                got.append((message.partition(), message.offset(), message.key(), message.value(),
                            list(message.headers() or []), stamp))
        return got
    finally:
        consumer.close()


def test_confluent_consumer_reads_what_spates_producer_wrote(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), PARTITIONS)
    sent = records()
    with Producer(broker.bootstrap, **broker.producer_settings(compression_type="lz4")) as producer:
        futures = [producer.send(topic, value, key=key, headers=headers, timestamp=ts) for key, value, headers, ts in sent]
        producer.flush(30)
    expected = {
        (f.result().partition, f.result().offset): (key, value, headers, ts)
        for f, (key, value, headers, ts) in zip(futures, sent)
    }
    got = confluent_read(broker.bootstrap, topic, RECORDS)
    assert {(p, o): (k, v, h, t) for p, o, k, v, h, t in got} == expected


def test_both_producers_send_each_key_to_the_same_partition(broker, topic_name) -> None:
    ours, theirs = (create_topic(broker.bootstrap, topic_name(name), PARTITIONS) for name in ("spate", "librdkafka"))
    keys = [key for key, *_ in records()]
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        our_partitions = [producer.send(ours, b"v", key=key).result(timeout=20).partition for key in keys]
    their_partitions: list[int | None] = [None] * len(keys)
    producer = ConfluentProducer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random", "linger.ms": 5})

    def report(index: int):
        def on_delivery(err, message) -> None:
            assert err is None, str(err)
            their_partitions[index] = message.partition()
        return on_delivery

    for index, key in enumerate(keys):
        producer.produce(theirs, b"v", key=key, on_delivery=report(index))
        producer.poll(0)
    assert producer.flush(30) == 0
    assert our_partitions == their_partitions
    assert len(set(our_partitions)) == PARTITIONS


def test_spates_consumer_reads_what_confluents_producer_wrote(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), PARTITIONS)
    sent = records()
    placed: dict[int, tuple[int, int]] = {}
    producer = ConfluentProducer({
        "bootstrap.servers": broker.bootstrap,
        "partitioner": "murmur2_random",
        "compression.type": "zstd",
        "linger.ms": 5,
    })

    def report(index: int):
        def on_delivery(err, message) -> None:
            assert err is None, str(err)
            placed[index] = (message.partition(), message.offset())
        return on_delivery

    for index, (key, value, headers, ts) in enumerate(sent):
        producer.produce(topic, value, key=key, headers=headers, timestamp=ts, on_delivery=report(index))
        producer.poll(0)
    assert producer.flush(30) == 0
    with assigned_consumer(broker.bootstrap, topic, PARTITIONS) as consumer:
        got = {(r.partition, r.offset): (r.key, r.value, list(r.headers), r.timestamp) for r in consume(consumer, RECORDS)}
    assert got == {placed[i]: record for i, record in enumerate(sent)}
