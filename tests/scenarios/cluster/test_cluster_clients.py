"""Real Kafka clients on a three-broker cluster, bootstrapped through one broker only.

Partitions are spread over all brokers, so every client must find each
partition's leader from metadata and talk to all three brokers: produce,
consume, a consumer group whose members come and go, and transactions whose
partitions (and whose coordinators) sit on different brokers.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import Producer as ConfluentProducer
from kafka import KafkaConsumer, KafkaProducer

from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests

PARTITIONS = 12
RECORDS = 600
SETTLE_S = 60.0


def _spread_topic(cluster: ClusterForTests, name: str) -> str:
    assert create_topic(cluster.address(2), name, partitions=PARTITIONS).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([name])
    leaders = Counter(cluster.leader_of(name, p) for p in range(PARTITIONS))
    assert set(leaders) == {1, 2, 3}, f"partitions are not spread over every broker: {leaders}"
    return name


def _consume_confluent(bootstrap: str, topic: str, count: int, *, isolation: str = "read_uncommitted") -> list:
    consumer = ConfluentConsumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "isolation.level": isolation,
    })
    consumer.subscribe([topic])
    values: list = []
    deadline = time.monotonic() + SETTLE_S
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def test_confluent_kafka_produces_and_consumes_through_one_broker(cluster: ClusterForTests, topic_name) -> None:
    topic = _spread_topic(cluster, topic_name())
    producer = ConfluentProducer({"bootstrap.servers": cluster.address(1), "enable.idempotence": True, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(topic, key=str(i).encode(), value=b"c-%d" % i)
    assert producer.flush(30) == 0
    values = _consume_confluent(cluster.address(3), topic, RECORDS)
    assert sorted(values) == sorted(b"c-%d" % i for i in range(RECORDS))


def test_kafka_python_produces_and_consumes_through_one_broker(cluster: ClusterForTests, topic_name) -> None:
    topic = _spread_topic(cluster, topic_name())
    producer = KafkaProducer(bootstrap_servers=cluster.address(2), acks="all")
    for i in range(RECORDS):
        producer.send(topic, key=str(i).encode(), value=b"k-%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=cluster.address(1), auto_offset_reset="earliest",
                             group_id=f"kp-{uuid.uuid4().hex[:8]}", consumer_timeout_ms=int(SETTLE_S * 1000))
    values = []
    for message in consumer:
        values.append(message.value)
        if len(values) == RECORDS:
            break
    consumer.close()
    assert sorted(values) == sorted(b"k-%d" % i for i in range(RECORDS))


def test_aiokafka_produces_and_consumes_through_one_broker(cluster: ClusterForTests, topic_name) -> None:
    topic = _spread_topic(cluster, topic_name())

    async def scenario() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=cluster.address(3), acks="all")
        await producer.start()
        try:
            for i in range(RECORDS):
                await producer.send(topic, key=str(i).encode(), value=b"a-%d" % i)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=cluster.address(2), auto_offset_reset="earliest",
                                    group_id=f"aio-{uuid.uuid4().hex[:8]}")
        await consumer.start()
        values: list[bytes] = []
        try:
            deadline = time.monotonic() + SETTLE_S
            while len(values) < RECORDS and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                values.extend(m.value for messages in batches.values() for m in messages)
        finally:
            await consumer.stop()
        return values

    values = asyncio.run(scenario())
    assert sorted(values) == sorted(b"a-%d" % i for i in range(RECORDS))


def test_a_consumer_group_spread_over_brokers_rebalances_as_members_come_and_go(
    cluster: ClusterForTests, topic_name
) -> None:
    topic = _spread_topic(cluster, topic_name())
    group = f"spread-{uuid.uuid4().hex[:8]}"
    settings = {"bootstrap.servers": cluster.address(1), "group.id": group, "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
    first, second = ConfluentConsumer(settings), ConfluentConsumer(settings)
    try:
        first.subscribe([topic])
        _poll_until(lambda: len(first.assignment()) == PARTITIONS, first)
        second.subscribe([topic])
        _poll_until(lambda: len(first.assignment()) + len(second.assignment()) == PARTITIONS
                    and first.assignment() and second.assignment(), first, second)
        assert {tp.partition for tp in first.assignment()} | {tp.partition for tp in second.assignment()} == \
            set(range(PARTITIONS))
        second.close()
        _poll_until(lambda: len(first.assignment()) == PARTITIONS, first)
    finally:
        first.close()


def _poll_until(condition, *consumers: ConfluentConsumer) -> None:
    deadline = time.monotonic() + SETTLE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the group did not settle")
        for consumer in consumers:
            consumer.poll(0.1)


def test_transactions_over_partitions_of_every_broker_commit_and_abort_whole(
    cluster: ClusterForTests, topic_name
) -> None:
    topic = _spread_topic(cluster, topic_name())
    producer = ConfluentProducer({"bootstrap.servers": cluster.address(1),
                                  "transactional.id": f"txn-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for partition in range(PARTITIONS):
        producer.produce(topic, value=b"aborted-%d" % partition, partition=partition)
    producer.abort_transaction(30)
    producer.begin_transaction()
    for partition in range(PARTITIONS):
        producer.produce(topic, value=b"committed-%d" % partition, partition=partition)
    producer.commit_transaction(30)
    values = _consume_confluent(cluster.address(2), topic, PARTITIONS, isolation="read_committed")
    assert sorted(values) == sorted(b"committed-%d" % p for p in range(PARTITIONS))
