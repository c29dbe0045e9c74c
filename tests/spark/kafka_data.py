"""Topics, records and an independent reader, all through confluent-kafka (librdkafka), for the Spark tests."""

from __future__ import annotations

import time
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic


@dataclass(frozen=True, order=True)
class Row:
    """One record as the spate source's columns show it (timestamp in ms)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    timestamp_type: int
    headers: tuple[tuple[str, bytes | None], ...] = ()


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the future
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name].result(30)


def add_partitions(bootstrap: str, name: str, total: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_partitions([NewPartitions(name, total)])[name].result(30)


def produce(bootstrap: str, topic: str, records: list[dict]) -> None:
    """Each record is a dict of ``produce`` arguments (value, key, partition, timestamp, headers)."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for record in records:
        producer.produce(topic, **record)
    remaining = producer.flush(30)
    if remaining:
        raise AssertionError(f"{remaining} records undelivered")


def produce_values(bootstrap: str, topic: str, partitions: int, per_partition: int, size: int = 0) -> None:
    """``per_partition`` records into each partition; values ``b"<partition>:<index>"`` padded to ``size``."""
    produce(bootstrap, topic, [
        {"value": f"{p}:{i}".encode().ljust(size, b"."), "key": f"k{i}".encode(), "partition": p}
        for i in range(per_partition)
        for p in range(partitions)
    ])


def produce_transactions(bootstrap: str, topic: str, txn_id: str, plan: list[tuple[list[bytes], bool]]) -> None:
    """Transactions into partition 0 of ``topic``: each ``(values, commit?)`` ends with a commit or abort marker."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5})
    producer.init_transactions(30)
    for values, commit in plan:
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value=value, partition=0)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)


def read_with_confluent(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Row]:
    """Every record of the topic, read by librdkafka from the beginning of each partition."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"oracle-{time.monotonic_ns()}",
                         "enable.auto.commit": False})
    consumer.assign([CkTopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    rows: list[Row] = []
    deadline = time.monotonic() + 30
    try:
        while len(rows) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                raise AssertionError(f"confluent-kafka read failed: {message.error()}")
            kind, timestamp = message.timestamp()
            rows.append(Row(
                message.topic(), message.partition(), message.offset(), message.key(), message.value(),
                timestamp, kind - 1,  # librdkafka counts CreateTime as 1, Kafka's attribute bit as 0
                tuple(message.headers() or ()),
            ))
    finally:
        consumer.close()
    return sorted(rows)


def spate_rows(df) -> list[Row]:
    """The rows of a spate source DataFrame, timestamps as epoch ms."""
    from pyspark.sql import functions as F

    has_headers = "headers" in df.columns
    selected = df.select(
        "topic", "partition", "offset", "key", "value",
        F.unix_millis("timestamp").alias("ts"), "timestampType",
        *(["headers"] if has_headers else []),
    )
    return sorted(
        Row(
            r.topic, r.partition, r.offset, r.key, r.value, r.ts, r.timestampType,
            tuple((h.key, h.value) for h in r.headers) if has_headers else (),
        )
        for r in selected.collect()
    )
