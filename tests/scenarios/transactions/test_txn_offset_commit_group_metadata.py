"""TxnOffsetCommit v3+ (KIP-447): the consumer's group metadata travels with the transactional commit.

confluent-kafka sends ``send_offsets_to_transaction`` with the consumer's
member id, generation and group instance id at the highest version the
broker serves; the coordinator accepts a current member and refuses a
member that has left the group, so a zombie's producer cannot commit.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from tests.scenarios.groups.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _joined_consumer(bootstrap: str, group: str, topic: str) -> Consumer:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 30
    while not consumer.assignment() and time.monotonic() < deadline:
        consumer.poll(0.2)
    assert consumer.assignment(), "the consumer never joined its group"
    return consumer


def _transactional_producer(bootstrap: str, txn_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    return producer


def test_a_members_offsets_commit_with_its_transaction(broker, unique) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 1)
    consumer = _joined_consumer(broker.bootstrap, group, topic)
    producer = _transactional_producer(broker.bootstrap, unique("txn"))
    try:
        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=20)
        assert committed[0].offset == 7
    finally:
        consumer.close()


def test_the_offsets_of_a_member_that_left_the_group_are_refused(broker, unique) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 1)
    zombie = _joined_consumer(broker.bootstrap, group, topic)
    stale = zombie.consumer_group_metadata()
    zombie.close()  # leaves the group: its member id and generation are gone
    producer = _transactional_producer(broker.bootstrap, unique("txn"))
    producer.begin_transaction()
    with pytest.raises(KafkaException) as refused:
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 3)], stale, 30)
    assert refused.value.args[0].name() in {"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION"}
