"""KIP-664's admin APIs through kafka-python's admin client: DescribeProducers, DescribeTransactions,
ListTransactions, and DescribeLogDirs with partition sizes, against a real broker process.

A confluent-kafka transactional producer leaves a transaction open, the way
a hanging transaction holds back the last stable offset, and the admin calls
must show it: the partition's producer with the transaction's first offset,
the transactional id Ongoing with its partition, and the id in the listing.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient
from kafka import TopicPartition as KpTopicPartition

from tests.support.broker_under_test import require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture(autouse=True)
def _spate_only(broker_kind: str) -> None:
    require_spate(broker_kind, "the test reads Spate's log dir layout")


@pytest.fixture
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=20000)
    yield client
    client.close()


@pytest.fixture
def open_transaction(broker, topic_name):
    """A topic with two committed records, then a third in a transaction left open."""
    topic, txn_id = topic_name(), topic_name("txn")
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in (b"a", b"b"):
        producer.produce(topic, value=value, partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"open", partition=0)
    assert producer.flush(20) == 0
    yield topic, txn_id
    producer.abort_transaction(30)


def test_describe_producers_shows_the_open_transactions_first_offset(admin, open_transaction) -> None:
    topic, _ = open_transaction
    states = admin.describe_producers([KpTopicPartition(topic, 0)])
    producers = states[KpTopicPartition(topic, 0)].active_producers
    assert len(producers) == 1
    producer = producers[0]
    # Offsets 0, 1: the committed records; 2: the commit marker; 3: the open transaction's record.
    assert producer.current_transaction_start_offset == 3
    assert producer.producer_id >= 0 and producer.last_sequence >= 0


def test_describe_transactions_shows_the_ongoing_transaction(admin, open_transaction) -> None:
    topic, txn_id = open_transaction
    description = admin.describe_transactions([txn_id])[txn_id]
    assert description.state == "Ongoing"
    assert description.transaction_start_time_ms > 0
    assert {(tp.topic, tp.partition) for tp in description.topic_partitions} == {(topic, 0)}


def _listed(admin: KafkaAdminClient, **filters) -> dict:
    """Every broker's listing merged, by transactional id."""
    return {t.transactional_id: t for listings in admin.list_transactions(**filters).values() for t in listings}


def test_list_transactions_filters_by_state_producer_and_duration(admin, open_transaction) -> None:
    _, txn_id = open_transaction
    ongoing = _listed(admin, state_filters=["Ongoing"])
    assert ongoing[txn_id].state == "Ongoing"
    producer_id = ongoing[txn_id].producer_id
    assert list(_listed(admin, producer_id_filters=[producer_id])) == [txn_id]
    assert txn_id not in _listed(admin, state_filters=["CompleteCommit"])
    assert txn_id not in _listed(admin, state_filters=["Ongoing"], duration_filter_ms=3_600_000)
    assert txn_id in _listed(admin, state_filters=["Ongoing"], duration_filter_ms=0)


def test_describe_log_dirs_gives_each_partitions_size(admin, open_transaction) -> None:
    topic, _ = open_transaction
    (broker,) = admin.describe_log_dirs({topic: [0]})
    (log_dir,) = broker["log_dirs"]
    assert log_dir["error_code"] == 0 and log_dir["usable_bytes"] > 0
    assert [t["name"] for t in log_dir["topics"]] == [topic]
    (partition,) = log_dir["topics"][0]["partitions"]
    assert partition["partition_index"] == 0 and partition["partition_size"] > 0
