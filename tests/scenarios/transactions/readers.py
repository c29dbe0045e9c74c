"""Reading topics to a known end with each third-party client, at either isolation level.

A read_committed reader cannot tell from offsets alone where visible data
ends (aborted records and markers take offsets), so writers finish with one
non-transactional sentinel record per partition and readers read until
they have seen every partition's sentinel.
"""

from __future__ import annotations

import asyncio
import time

from aiokafka import AIOKafkaConsumer
from aiokafka.structs import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

SENTINEL = b"--end--"
READ_TIMEOUT_S = 30

Partitions = dict[str, int]  # topic → partition count


def write_sentinels(bootstrap: str, topics: Partitions) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for topic, count in topics.items():
        for partition in range(count):
            producer.produce(topic, value=SENTINEL, partition=partition)
    if producer.flush(30):
        raise AssertionError("sentinels were not delivered")


def _all(topics: Partitions) -> list[tuple[str, int]]:
    return [(topic, p) for topic, count in topics.items() for p in range(count)]


def _collect(values: list[bytes], seen: set[tuple[str, int]], topic: str, partition: int, value: bytes) -> None:
    if value == SENTINEL:
        seen.add((topic, partition))
    else:
        values.append(value)


def read_confluent(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "isolation.level": isolation})
    consumer.assign([TopicPartition(t, p, 0) for t, p in _all(topics)])
    values: list[bytes] = []
    seen: set[tuple[str, int]] = set()
    deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        while len(seen) < len(_all(topics)) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            _collect(values, seen, message.topic(), message.partition(), message.value())
    finally:
        consumer.close()
    if len(seen) < len(_all(topics)):
        raise AssertionError(f"confluent-kafka ({isolation}) saw sentinels of {sorted(seen)} only")
    return values


def read_kafka_python(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation,
                             auto_offset_reset="earliest")
    consumer.assign([KafkaTopicPartition(t, p) for t, p in _all(topics)])
    consumer.seek_to_beginning()
    values: list[bytes] = []
    seen: set[tuple[str, int]] = set()
    deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        while len(seen) < len(_all(topics)) and time.monotonic() < deadline:
            for tp, messages in consumer.poll(timeout_ms=200).items():
                for message in messages:
                    _collect(values, seen, tp.topic, tp.partition, message.value)
    finally:
        consumer.close()
    if len(seen) < len(_all(topics)):
        raise AssertionError(f"kafka-python ({isolation}) saw sentinels of {sorted(seen)} only")
    return values


def read_aiokafka(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    async def run() -> list[bytes]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    isolation_level=isolation, auto_offset_reset="earliest")
        await consumer.start()
        values: list[bytes] = []
        seen: set[tuple[str, int]] = set()
        try:
            consumer.assign([AioTopicPartition(t, p) for t, p in _all(topics)])
            await consumer.seek_to_beginning()
            deadline = time.monotonic() + READ_TIMEOUT_S
            while len(seen) < len(_all(topics)) and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200)
                for tp, messages in batches.items():
                    for message in messages:
                        _collect(values, seen, tp.topic, tp.partition, message.value)
        finally:
            await consumer.stop()
        if len(seen) < len(_all(topics)):
            raise AssertionError(f"aiokafka ({isolation}) saw sentinels of {sorted(seen)} only")
        return values

    return asyncio.run(run())


READERS = {"confluent-kafka": read_confluent, "kafka-python": read_kafka_python, "aiokafka": read_aiokafka}
