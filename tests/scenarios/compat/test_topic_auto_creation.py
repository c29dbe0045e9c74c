"""Metadata and auto topic creation follow ``auto.create.topics.enable`` and ``num.partitions``.

When enabled, producing to an unknown topic creates it with ``num.partitions``
partitions; a consumer's metadata request (allow_auto_topic_creation=false)
never creates one. When disabled, metadata answers UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from confluent_kafka import KafkaError
from kafka.admin import KafkaAdminClient

from tests.scenarios.compat.clients import (
    DRIVERS,
    ClientOperationError,
    ConfluentDriver,
    OutgoingRecord,
)
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import (
    TANSU_IDEMPOTENCE_BUG,
    BrokerFactory,
    require_spate,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

AUTO_PARTITIONS = 4
UNKNOWN_TOPIC_OR_PARTITION = 3


@pytest.fixture
def auto_creating_broker(broker_factory: BrokerFactory) -> BrokerProcess:
    return broker_factory({"auto.create.topics.enable": "true", "num.partitions": str(AUTO_PARTITIONS)})


@pytest.fixture
def non_creating_broker(broker_factory: BrokerFactory) -> BrokerProcess:
    return broker_factory({"auto.create.topics.enable": "false", "num.partitions": str(AUTO_PARTITIONS)})


def topic_partitions(bootstrap: str, topic: str) -> int | None:
    """Partition count from a metadata request for all topics (which never creates one), or None if absent."""
    metadata = ConfluentDriver(bootstrap).admin().list_topics(timeout=10)
    found = metadata.topics.get(topic)
    return None if found is None else len(found.partitions)


@pytest.mark.parametrize("client", list(DRIVERS))
def test_producing_to_unknown_topic_creates_it_with_num_partitions(
    auto_creating_broker: BrokerProcess, broker_kind: str, client: str
) -> None:
    if client == "aiokafka":
        require_spate(broker_kind, TANSU_IDEMPOTENCE_BUG)
    topic = f"auto-{client}-{uuid.uuid4().hex[:8]}"
    driver = DRIVERS[client](auto_creating_broker.bootstrap)

    (placement,) = driver.produce(topic, [OutgoingRecord(b"k", b"first", (), recent_base_ms())])

    assert topic_partitions(auto_creating_broker.bootstrap, topic) == AUTO_PARTITIONS
    (record,) = driver.consume(topic, {placement.partition: 0}, {placement.partition: placement.offset + 1})
    assert (record.offset, record.value) == (0, b"first")


def test_consumer_metadata_request_does_not_create_topic(auto_creating_broker: BrokerProcess) -> None:
    topic = f"not-created-{uuid.uuid4().hex[:8]}"
    consumer = ConfluentDriver(auto_creating_broker.bootstrap).consumer()
    try:
        # Consumers send allow_auto_topic_creation=false (allow.auto.create.topics defaults to false).
        answer = consumer.list_topics(topic=topic, timeout=10).topics[topic]
    finally:
        consumer.close()

    assert answer.error is not None and answer.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert topic_partitions(auto_creating_broker.bootstrap, topic) is None


def test_metadata_for_unknown_topic_is_unknown_topic_when_auto_creation_is_off(
    non_creating_broker: BrokerProcess,
) -> None:
    topic = f"unknown-{uuid.uuid4().hex[:8]}"
    # The admin client asks with allow_auto_topic_creation=true; the broker setting must win.
    answer = ConfluentDriver(non_creating_broker.bootstrap).admin().list_topics(topic=topic, timeout=10).topics[topic]

    assert answer.error is not None and answer.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    assert topic_partitions(non_creating_broker.bootstrap, topic) is None


def test_kafka_python_describe_of_unknown_topic_reports_unknown_topic(non_creating_broker: BrokerProcess) -> None:
    topic = f"unknown-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=non_creating_broker.bootstrap, request_timeout_ms=10_000)
    try:
        (described,) = admin.describe_topics([topic])
    finally:
        admin.close()

    assert (described["name"], described["error_code"]) == (topic, UNKNOWN_TOPIC_OR_PARTITION)


def test_aiokafka_describe_of_unknown_topic_reports_unknown_topic(non_creating_broker: BrokerProcess) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    topic = f"unknown-{uuid.uuid4().hex[:8]}"

    async def describe() -> list:
        admin = AIOKafkaAdminClient(bootstrap_servers=non_creating_broker.bootstrap, request_timeout_ms=10_000)
        try:
            await admin.start()
            return await admin.describe_topics([topic])
        finally:
            await admin.close()

    (described,) = asyncio.run(asyncio.wait_for(describe(), 20))

    assert (described["topic"], described["error_code"]) == (topic, UNKNOWN_TOPIC_OR_PARTITION)


def test_producing_to_unknown_topic_fails_when_auto_creation_is_off(non_creating_broker: BrokerProcess) -> None:
    topic = f"unknown-{uuid.uuid4().hex[:8]}"
    driver = ConfluentDriver(non_creating_broker.bootstrap, timeout_s=10)
    # Give up on the unknown topic quickly instead of waiting for it to appear.
    producer = driver.producer(**{"topic.metadata.propagation.max.ms": 1000})
    errors: list[KafkaError] = []
    producer.produce(topic, b"nowhere", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(10)

    (error,) = errors
    assert error is not None and error.code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)
    assert topic_partitions(non_creating_broker.bootstrap, topic) is None


def test_create_topic_still_works_when_auto_creation_is_off(non_creating_broker: BrokerProcess) -> None:
    topic = f"explicit-{uuid.uuid4().hex[:8]}"
    driver = ConfluentDriver(non_creating_broker.bootstrap)
    driver.create_topic(topic, 2)

    assert topic_partitions(non_creating_broker.bootstrap, topic) == 2
    with pytest.raises(ClientOperationError) as duplicate:
        driver.create_topic(topic, 2)
    assert duplicate.value.code == KafkaError.TOPIC_ALREADY_EXISTS
