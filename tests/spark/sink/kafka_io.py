"""Writing test input and reading sink output with confluent-kafka (librdkafka), an independent client.

Topics are created with ``tests.spark.kafka_data.create_topic``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from confluent_kafka import Consumer, TopicPartition

from tests.spark.kafka_data import produce as produce_records

READ_TIMEOUT_S = 60


@dataclass(frozen=True)
class ReadRecord:
    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def produce(bootstrap: str, topic: str, values: list[bytes], *, partitions: int = 1) -> None:
    """Each value as a record's key and value, round-robin over ``partitions``."""
    produce_records(bootstrap, topic, [
        {"value": value, "key": value, "partition": index % partitions} for index, value in enumerate(values)
    ])


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets", "enable.auto.commit": False})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    finally:
        consumer.close()


def read_all(
    bootstrap: str,
    topics: dict[str, int],
    *,
    isolation: str = "read_committed",
    expect: int | None = None,
    quiet_s: float = 2.0,
) -> list[ReadRecord]:
    """Everything readable in ``topics`` (name → partition count) from the start.

    Reads until ``expect`` records arrived (then ``quiet_s`` more, to catch
    extras), or, without ``expect``, until nothing arrived for ``quiet_s``.
    """
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "sink-test-reader",
        "enable.auto.commit": False,
        "isolation.level": isolation,
    })
    consumer.assign([TopicPartition(t, p, 0) for t, count in topics.items() for p in range(count)])
    records: list[ReadRecord] = []
    deadline = time.monotonic() + READ_TIMEOUT_S
    last_seen = time.monotonic()
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            now = time.monotonic()
            if message is None or message.error():
                enough = expect is None or len(records) >= expect
                if enough and now - last_seen >= quiet_s:
                    break
                continue
            last_seen = now
            headers = tuple((k, v) for k, v in (message.headers() or []))
            records.append(ReadRecord(message.topic(), message.partition(), message.key(), message.value(), headers))
    finally:
        consumer.close()
    return records
