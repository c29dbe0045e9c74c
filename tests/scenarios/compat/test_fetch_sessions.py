"""Real consumers of a 50-partition topic and the broker's fetch sessions (KIP-227).

kafka-python opens an incremental fetch session and then sends incremental
fetches; the broker's ``kafka_server_fetchsessioncache_*`` metrics show the
session and the incremental requests it served. librdkafka (confluent-kafka)
does not implement fetch sessions: it sends session 0 at the final epoch, so
its fetches are all served without a session — and still read everything.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.scenarios.metrics.conftest import MeteredBroker, metrics_overrides
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import SPATE
from tests.support.metrics_scrape import scrape
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 50
PER_PARTITION = 4
CACHE = "kafka_server_fetchsessioncache_"


@pytest.fixture(scope="module")
def metered(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MeteredBroker]:
    if broker_kind != SPATE:
        pytest.skip("the fetch session metrics are Spate's own")
    port = free_port()
    broker = BrokerProcess(tmp_path_factory.mktemp("sessions"), overrides=metrics_overrides(port))
    with running_broker(broker) as running:
        yield MeteredBroker(running, port)


def create_and_fill(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition in range(PARTITIONS):
        for i in range(PER_PARTITION):
            producer.produce(topic, value=f"{partition}-{i}".encode(), partition=partition)
    assert producer.flush(30) == 0


def requests_by_kind(url: str) -> dict[str, float]:
    sample = scrape(url)
    return {kind: sample.sum(CACHE + "fetchrequests_total", kind=kind)
            for kind in ("full", "incremental", "sessionless", "session_error")}


def test_kafka_python_reads_fifty_partitions_through_one_incremental_session(metered: MeteredBroker) -> None:
    from kafka import KafkaConsumer

    bootstrap, topic = metered.broker.bootstrap, "sessions-kafka-python"
    create_and_fill(bootstrap, topic)
    before = requests_by_kind(metered.metrics_url)
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, fetch_max_wait_ms=100, consumer_timeout_ms=20_000)
    try:
        read = 0
        deadline = time.monotonic() + 60
        while read < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            read += sum(len(batch) for batch in consumer.poll(timeout_ms=500).values())
        assert read == PARTITIONS * PER_PARTITION
        # Caught up: a few more empty polls, each an incremental fetch that carries nothing.
        for _ in range(5):
            assert not consumer.poll(timeout_ms=200)
        after = requests_by_kind(metered.metrics_url)
        sessions = scrape(metered.metrics_url).value(CACHE + "numincrementalfetchsessions")
        cached = scrape(metered.metrics_url).value(CACHE + "numincrementalfetchpartitionscached")
    finally:
        consumer.close()
    assert after["full"] > before["full"]
    assert after["incremental"] - before["incremental"] >= 5
    assert after["session_error"] == before["session_error"]
    assert sessions >= 1 and cached >= PARTITIONS


def test_confluent_kafka_reads_fifty_partitions_without_a_session(metered: MeteredBroker) -> None:
    bootstrap, topic = metered.broker.bootstrap, "sessions-confluent"
    create_and_fill(bootstrap, topic)
    before = requests_by_kind(metered.metrics_url)
    consumer = ConfluentConsumer({"bootstrap.servers": bootstrap, "group.id": "sessions-confluent",
                                  "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100})
    try:
        consumer.subscribe([topic])
        read, deadline = 0, time.monotonic() + 60
        while read < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                read += 1
    finally:
        consumer.close()
    assert read == PARTITIONS * PER_PARTITION
    after = requests_by_kind(metered.metrics_url)
    assert after["sessionless"] > before["sessionless"]
    assert (after["full"], after["incremental"]) == (before["full"], before["incremental"])
    assert after["session_error"] == before["session_error"]
