"""Topic setup and record production for the group suite (through confluent-kafka)."""

from __future__ import annotations

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name].result(30)


def produce(bootstrap: str, topic: str, per_partition: int, partitions: int) -> None:
    """``per_partition`` records into each partition; values are ``b"<partition>:<index>"``."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition in range(partitions):
        for index in range(per_partition):
            producer.produce(topic, value=f"{partition}:{index}".encode(), partition=partition)
    remaining = producer.flush(30)
    if remaining:
        raise AssertionError(f"{remaining} records undelivered")
