"""A broker whose groups form at once, topics with records, and confluent-kafka members for ``spate groups``."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer

from broker_core.server.embedded import EmbeddedBroker
from spate.client import Admin, NewTopic, Producer

GROUP_OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}
SETTLE_S = 20.0


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory) -> Iterator[str]:
    with EmbeddedBroker(tmp_path_factory.mktemp("broker"), GROUP_OVERRIDES) as broker:
        yield broker.bootstrap_servers


@pytest.fixture
def names() -> tuple[str, str]:
    suffix = uuid.uuid4().hex[:8]
    return f"lag-{suffix}", f"grp-{suffix}"


@pytest.fixture
def admin(bootstrap) -> Iterator[Admin]:
    with Admin(bootstrap, default_api_timeout_ms=20_000) as client:
        yield client


@pytest.fixture
def make_topic(admin) -> Callable[..., str]:
    def create(name: str, partitions: int) -> str:
        admin.create_topics(NewTopic(name, num_partitions=partitions))
        return name

    return create


def produce(bootstrap: str, topic: str, per_partition: dict[int, int], timestamp: int | None = None) -> None:
    with Producer(bootstrap) as producer:
        futures = [
            producer.send(topic, b"v", partition=p, timestamp=timestamp)
            for p, count in per_partition.items()
            for _ in range(count)
        ]
        for future in futures:
            future.result()


def group_member(bootstrap: str, group: str, topic: str, client_id: str) -> ConfluentConsumer:
    consumer = ConfluentConsumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000,
    })
    consumer.subscribe([topic])
    return consumer


def consume(consumer: ConfluentConsumer, count: int) -> list:
    """Poll until ``count`` records have arrived."""
    records: list = []
    deadline = time.monotonic() + SETTLE_S
    while len(records) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out with {len(records)} of {count} records")
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            records.append(message)
    return records


def wait_for_assignment(consumer: ConfluentConsumer, partitions: int) -> None:
    deadline = time.monotonic() + SETTLE_S
    while len(consumer.assignment()) < partitions:
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the member's assignment")
        consumer.poll(0.1)


@pytest.fixture
def refused_address() -> str:
    """An address where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"
