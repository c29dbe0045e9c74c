"""Reading topics to a known end with each third-party client, at either isolation level.

A read_committed reader cannot tell from offsets alone where visible data
ends (aborted records and markers take offsets), so writers finish with one
non-transactional sentinel record per partition and readers read until
they have seen every partition's sentinel.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

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


@dataclass
class UntilSentinels:
    """Values one client read so far, until it has seen every partition's sentinel or the time is up."""

    client: str
    topics: Partitions
    isolation: str
    values: list[bytes] = field(default_factory=list)
    seen: set[tuple[str, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.partitions = _all(self.topics)
        self._deadline = time.monotonic() + READ_TIMEOUT_S

    def wanting(self) -> bool:
        """Whether a sentinel is still missing and there is time left to read it."""
        return len(self.seen) < len(self.partitions) and time.monotonic() < self._deadline

    def add(self, topic: str, partition: int, value: bytes) -> None:
        if value == SENTINEL:
            self.seen.add((topic, partition))
        else:
            self.values.append(value)

    def result(self) -> list[bytes]:
        """The values read; AssertionError if some partition's sentinel never came."""
        if len(self.seen) < len(self.partitions):
            raise AssertionError(f"{self.client} ({self.isolation}) saw sentinels of {sorted(self.seen)} only")
        return self.values


def read_confluent(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    read = UntilSentinels("confluent-kafka", topics, isolation)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "isolation.level": isolation})
    consumer.assign([TopicPartition(t, p, 0) for t, p in read.partitions])
    try:
        while read.wanting():
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            read.add(message.topic(), message.partition(), message.value())
    finally:
        consumer.close()
    return read.result()


def read_kafka_python(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    read = UntilSentinels("kafka-python", topics, isolation)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, isolation_level=isolation,
                             auto_offset_reset="earliest")
    consumer.assign([KafkaTopicPartition(t, p) for t, p in read.partitions])
    consumer.seek_to_beginning()
    try:
        while read.wanting():
            for tp, messages in consumer.poll(timeout_ms=200).items():
                for message in messages:
                    read.add(tp.topic, tp.partition, message.value)
    finally:
        consumer.close()
    return read.result()


def read_aiokafka(bootstrap: str, topics: Partitions, isolation: str) -> list[bytes]:
    async def run() -> list[bytes]:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                    isolation_level=isolation, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([AioTopicPartition(t, p) for t, p in _all(topics)])
            await consumer.seek_to_beginning()
            read = UntilSentinels("aiokafka", topics, isolation)
            while read.wanting():
                batches = await consumer.getmany(timeout_ms=200)
                for tp, messages in batches.items():
                    for message in messages:
                        read.add(tp.topic, tp.partition, message.value)
        finally:
            await consumer.stop()
        return read.result()

    return asyncio.run(run())


READERS = {"confluent-kafka": read_confluent, "kafka-python": read_kafka_python, "aiokafka": read_aiokafka}
