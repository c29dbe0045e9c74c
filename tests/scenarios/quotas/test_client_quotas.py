"""Client quotas against a real broker: set and described over the wire, enforced by throttling.

A producer (or consumer) over its byte-rate quota is slowed to the quota and
loses nothing: every record sent is acknowledged and read back. The rate is
measured from the first request over ``SPATE_QUOTA_TEST_SECONDS`` (default
10.5; 30 is the long variant) with Kafka's default window (11 samples of
1 s): a new client may spend ten windows' budget at once, as Kafka allows,
and is then held back until the window has caught up.
confluent-kafka reads ``throttle_time_ms`` and reports the throttling.
"""

from __future__ import annotations

import os
import time

import pytest

from spate.client import Admin, Consumer, Producer
from spate.client.admin.quota_admin import ANY, ClientQuotaAlteration
from spate.client.errors import AdminError
from spate.structs import TopicPartition
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

QUOTA = 1024 * 1024  # bytes per second
SECONDS = float(os.environ.get("SPATE_QUOTA_TEST_SECONDS", "10.5"))
VALUE = b"x" * 10_000


def set_quota(broker: BrokerProcess, entity: dict, ops: dict) -> None:
    with Admin(broker.bootstrap) as admin:
        admin.alter_client_quotas([ClientQuotaAlteration(entity, ops)])


def test_described_quotas_are_the_ones_set_and_removed_keys_go(broker: BrokerProcess) -> None:
    set_quota(broker, {"user": "alice", "client-id": None}, {"producer_byte_rate": 2048, "request_percentage": 50})
    set_quota(broker, {"client-id": "reporter"}, {"consumer_byte_rate": 4096})
    with Admin(broker.bootstrap) as admin:
        found = admin.describe_client_quotas({"user": "alice"})
        assert [(e.entity, e.values) for e in found] == [
            ({"user": "alice", "client-id": None}, {"producer_byte_rate": 2048.0, "request_percentage": 50.0})]
        assert admin.describe_client_quotas({"user": "alice"}, strict=True) == []
        clients = admin.describe_client_quotas({"client-id": ANY}, strict=True)
        assert [(e.entity, e.values) for e in clients] == [({"client-id": "reporter"}, {"consumer_byte_rate": 4096.0})]
        admin.alter_client_quotas([ClientQuotaAlteration({"client-id": "reporter"}, {"consumer_byte_rate": None})])
        assert admin.describe_client_quotas({"client-id": ANY}, strict=True) == []


def test_bad_quotas_are_refused_with_invalid_request(broker: BrokerProcess) -> None:
    with Admin(broker.bootstrap) as admin:
        for entity, ops, text in [({"user": "bob"}, {"producer_byte_rate": -1}, "must be positive"),
                                  ({"user": "bob"}, {"fetch_rate": 1}, "Invalid configuration key"),
                                  ({"group": "g"}, {"producer_byte_rate": 1}, "entity type")]:
            with pytest.raises(AdminError, match="INVALID_REQUEST") as refused:
                admin.alter_client_quotas([ClientQuotaAlteration(entity, ops)])
            assert text in str(refused.value.errors)


def test_a_producer_over_its_quota_is_throttled_to_it_and_loses_nothing(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "quota-produce", partitions=1, replication_factor=1)
    set_quota(broker, {"client-id": "fast-producer"}, {"producer_byte_rate": QUOTA})
    # A small buffer: send() waits for acknowledgements instead of queueing the whole run.
    producer = Producer(broker.bootstrap, client_id="fast-producer", linger_ms=5, acks="all",
                        buffer_memory=256 * 1024)
    acked_in_time: list[bool] = []
    sent, started = 0, time.monotonic()
    futures = []
    while time.monotonic() - started < SECONDS:
        futures.append(producer.send("quota-produce", VALUE, key=str(sent).encode(), on_delivery=lambda *_: (
            acked_in_time.append(time.monotonic() - started <= SECONDS))))
        sent += 1
    producer.flush(60)
    assert all(f.exception() is None for f in futures)
    producer.close()
    rate = sum(acked_in_time) * len(VALUE) / SECONDS
    assert rate == pytest.approx(QUOTA, rel=0.10), f"{rate / QUOTA:.2f} of the quota over {SECONDS} s"

    consumer = Consumer(broker.bootstrap, client_id="checker")
    consumer.assign([TopicPartition("quota-produce", 0)])
    consumer.seek_to_beginning(TopicPartition("quota-produce", 0))
    keys: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(keys) < sent and time.monotonic() < deadline:
        keys.extend(r.key for r in consumer.poll(timeout_ms=500, max_records=10_000))
    consumer.close()
    assert keys == [str(i).encode() for i in range(sent)]


def test_a_consumer_over_its_quota_is_throttled_to_it_and_reads_everything(broker: BrokerProcess) -> None:
    create_topic(broker.bootstrap, "quota-fetch", partitions=1, replication_factor=1)
    total = int(QUOTA * SECONDS * 2 / len(VALUE))
    producer = Producer(broker.bootstrap, client_id="loader", linger_ms=5)
    for i in range(total):
        producer.send("quota-fetch", VALUE, key=str(i).encode())
    producer.flush(60)
    producer.close()
    set_quota(broker, {"client-id": "slow-reader"}, {"consumer_byte_rate": QUOTA})
    consumer = Consumer(broker.bootstrap, client_id="slow-reader", max_partition_fetch_bytes=256 * 1024)
    partition = TopicPartition("quota-fetch", 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    keys: list[bytes] = []
    started = time.monotonic()
    while time.monotonic() - started < SECONDS:
        keys.extend(r.key for r in consumer.poll(timeout_ms=500, max_records=10_000))
    elapsed = time.monotonic() - started
    rate = len(keys) * len(VALUE) / elapsed
    assert rate == pytest.approx(QUOTA, rel=0.10), f"{rate / QUOTA:.2f} of the quota over {elapsed:.1f} s"
    set_quota(broker, {"client-id": "slow-reader"}, {"consumer_byte_rate": None})
    deadline = time.monotonic() + 60
    while len(keys) < total and time.monotonic() < deadline:
        keys.extend(r.key for r in consumer.poll(timeout_ms=500, max_records=10_000))
    consumer.close()
    assert keys == [str(i).encode() for i in range(total)]


def test_confluent_kafka_reports_the_throttling(broker: BrokerProcess) -> None:
    from confluent_kafka import Producer as ConfluentProducer

    create_topic(broker.bootstrap, "quota-confluent", partitions=1, replication_factor=1)
    set_quota(broker, {"user": None}, {"producer_byte_rate": 100_000})  # every user, ANONYMOUS too
    throttles = []
    producer = ConfluentProducer({"bootstrap.servers": broker.bootstrap, "client.id": "rdkafka-producer",
                                  "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    delivered = []
    try:
        deadline = time.monotonic() + 30
        for i in range(300):
            producer.produce("quota-confluent", VALUE, on_delivery=lambda err, msg: delivered.append(err))
            producer.poll(0)
        while (len(delivered) < 300 or not throttles) and time.monotonic() < deadline:
            producer.poll(0.2)
    finally:
        set_quota(broker, {"user": None}, {"producer_byte_rate": None})
    assert delivered == [None] * 300
    assert throttles and max(throttles) > 0


def test_a_client_over_its_request_percentage_is_throttled(broker: BrokerProcess) -> None:
    from confluent_kafka import Producer as ConfluentProducer

    set_quota(broker, {"client-id": "chatty"}, {"request_percentage": 0.00001})
    throttles: list[int] = []
    producer = ConfluentProducer({"bootstrap.servers": broker.bootstrap, "client.id": "chatty",
                                  "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    producer.list_topics(timeout=30)
    deadline = time.monotonic() + 15
    while not throttles and time.monotonic() < deadline:
        producer.poll(0.2)
    assert throttles and max(throttles) > 0
