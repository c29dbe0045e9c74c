"""Transactions written by real clients, read by real clients at both isolation levels.

Two producers (confluent-kafka and kafka-python) each run three transactions
over two topics: committed, aborted, committed. Every reader
(confluent-kafka, kafka-python, aiokafka) at read_committed sees both
committed transactions whole and nothing of the aborted one; at
read_uncommitted it sees all three.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer
from kafka import KafkaProducer

from tests.scenarios.groups.topics import create_topic
from tests.scenarios.transactions.readers import READERS, write_sentinels

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

RECORDS_PER_TXN = 30


def txn_values(writer: str, txn: str) -> list[bytes]:
    return [f"{writer}:{txn}:{i}".encode() for i in range(RECORDS_PER_TXN)]


def write_with_confluent(bootstrap: str, txn_id: str, topics: list[str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5})
    producer.init_transactions(30)
    for txn, commit in (("first", True), ("aborted", False), ("second", True)):
        producer.begin_transaction()
        for i, value in enumerate(txn_values("confluent", txn)):
            producer.produce(topics[i % 2], value=value, partition=i % 3 if i % 2 == 0 else 0)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)


def write_with_kafka_python(bootstrap: str, txn_id: str, topics: list[str]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, linger_ms=5)
    producer.init_transactions()
    for txn, commit in (("first", True), ("aborted", False), ("second", True)):
        producer.begin_transaction()
        for i, value in enumerate(txn_values("kafka-python", txn)):
            producer.send(topics[i % 2], value=value, partition=i % 3 if i % 2 == 0 else 0)
        producer.flush()
        (producer.commit_transaction if commit else producer.abort_transaction)()
    producer.close()


WRITERS = {"confluent": write_with_confluent, "kafka-python": write_with_kafka_python}


@pytest.fixture(scope="module", params=sorted(WRITERS))
def written(request, broker):
    """Topics holding one writer's three transactions, then a sentinel per partition."""
    writer = request.param
    topics = {f"txn-a-{writer}": 3, f"txn-b-{writer}": 1}
    for name, partitions in topics.items():
        create_topic(broker.bootstrap, name, partitions)
    WRITERS[writer](broker.bootstrap, f"writer-{writer}", list(topics))
    write_sentinels(broker.bootstrap, topics)
    return writer, topics


@pytest.mark.parametrize("reader", sorted(READERS))
def test_read_committed_sees_committed_transactions_whole_and_nothing_aborted(broker, written, reader):
    writer, topics = written
    values = READERS[reader](broker.bootstrap, topics, "read_committed")
    name = "confluent" if writer == "confluent" else "kafka-python"
    expected = txn_values(name, "first") + txn_values(name, "second")
    assert sorted(values) == sorted(expected)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_read_uncommitted_sees_aborted_records_too(broker, written, reader):
    writer, topics = written
    values = READERS[reader](broker.bootstrap, topics, "read_uncommitted")
    name = "confluent" if writer == "confluent" else "kafka-python"
    expected = txn_values(name, "first") + txn_values(name, "aborted") + txn_values(name, "second")
    assert sorted(values) == sorted(expected)
