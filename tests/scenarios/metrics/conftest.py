"""A Spate broker process with metrics on, and real clients' traffic through it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import SPATE
from tests.support.ports import free_port

TOPIC = "metered"
GROUP = "metered-readers"
PRODUCED = 50
CONSUMED = 30


@dataclass
class MeteredBroker:
    broker: BrokerProcess
    metrics_port: int

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"


def metrics_overrides(port: int) -> dict[str, str]:
    return {"metrics.http.listener": f"http://127.0.0.1:{port}"}


@pytest.fixture(scope="module")
def metered(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MeteredBroker]:
    if broker_kind != SPATE:
        pytest.skip("metrics are Spate's own")
    port = free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("metered"), overrides=metrics_overrides(port))
    with running_broker(broker) as running:
        yield MeteredBroker(running, port)


def produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=f"record-{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def consume_and_commit(bootstrap: str, topic: str, group: str, count: int, timeout: float = 30.0) -> int:
    """Read exactly ``count`` records of partition 0 in ``group`` and commit the position after them."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        read = 0
        deadline = time.monotonic() + timeout
        while read < count:
            assert time.monotonic() < deadline, f"read {read} of {count} records in {timeout}s"
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                read += 1
        consumer.commit(offsets=[TopicPartition(topic, 0, count)], asynchronous=False)
        return read
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def traffic(metered: MeteredBroker) -> MeteredBroker:
    """``PRODUCED`` records to ``TOPIC`` partition 0, the first ``CONSUMED`` of them read and committed by ``GROUP``."""
    produce(metered.broker.bootstrap, TOPIC, PRODUCED)
    consume_and_commit(metered.broker.bootstrap, TOPIC, GROUP, CONSUMED)
    return metered
