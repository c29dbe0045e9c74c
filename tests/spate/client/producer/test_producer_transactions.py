"""Transactions of Spate's producer against a real Spate broker, read by Spate's and confluent-kafka's consumers.

Kafka's semantics: a committed transaction is read whole by read_committed
consumers, an aborted one never (read_uncommitted consumers see both); a
second producer with the same transactional id fences the first; offsets
sent to a transaction reach the group only when it commits; calls out of
order raise InvalidTxnStateError; a failed record makes the transaction
abortable, and after the abort the producer goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import TopicPartition as ConfluentTopicPartition

from spate.client import (
    Admin,
    Consumer,
    InvalidTxnStateError,
    NewTopic,
    OffsetAndMetadata,
    Producer,
    ProducerFencedError,
    TopicPartition,
    TransactionAbortableError,
)
from tests.spate.client.group_brokers import (
    TIMEOUT_S,
    read_all,
    start_broker,
    unique_names,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TXN_TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from start_broker(tmp_path_factory, "txn-client")


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    return unique_names(request)


def create(bootstrap: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> str:
    with Admin(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, configs or {})])
    return name


def transactional(bootstrap: str, txn_id: str, **settings) -> Producer:
    producer = Producer(bootstrap, transactional_id=txn_id, linger_ms=2, transaction_timeout_ms=TXN_TIMEOUT_MS,
                        max_block_ms=int(TIMEOUT_S * 1000), **settings)
    producer.init_transactions()
    return producer


def confluent_read_committed(bootstrap: str, topic: str, partitions: int, expected: int) -> list[bytes]:
    consumer = ConfluentConsumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                                  "isolation.level": "read_committed"})
    consumer.assign([ConfluentTopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline and len(values) < expected:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                values.append(message.value())
        # Anything more (aborted data) would arrive with the committed records; give it a moment.
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                values.append(message.value())
    finally:
        consumer.close()
    return values


def values(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(count)]


def test_a_committed_transaction_over_two_topics_is_read_whole_by_read_committed_consumers(
    broker: BrokerProcess, unique
) -> None:
    first, second = create(broker.bootstrap, unique("a"), 3), create(broker.bootstrap, unique("b"), 1)
    with transactional(broker.bootstrap, unique("txn")) as producer:
        producer.begin_transaction()
        futures = [producer.send(first, v) for v in values("a", 30)] + [producer.send(second, v) for v in values("b", 10)]
        producer.commit_transaction()
        assert all(f.done() and f.exception() is None for f in futures)
    assert sorted(read_all(broker.bootstrap, first, 3, "read_committed")) == sorted(values("a", 30))
    assert sorted(read_all(broker.bootstrap, second, 1, "read_committed")) == sorted(values("b", 10))
    assert sorted(confluent_read_committed(broker.bootstrap, first, 3, 30)) == sorted(values("a", 30))


def test_an_aborted_transaction_is_invisible_to_read_committed_and_visible_to_read_uncommitted(
    broker: BrokerProcess, unique
) -> None:
    topic = create(broker.bootstrap, unique("t"), 2)
    with transactional(broker.bootstrap, unique("txn")) as producer:
        producer.begin_transaction()
        for v in values("aborted", 20):
            producer.send(topic, v)
        producer.flush()  # written to the log, so only the markers can hide them
        producer.abort_transaction()
        producer.begin_transaction()
        for v in values("kept", 10):
            producer.send(topic, v)
        producer.commit_transaction()
    assert sorted(read_all(broker.bootstrap, topic, 2, "read_committed")) == sorted(values("kept", 10))
    assert sorted(read_all(broker.bootstrap, topic, 2, "read_uncommitted")) == sorted(
        values("aborted", 20) + values("kept", 10)
    )
    assert sorted(confluent_read_committed(broker.bootstrap, topic, 2, 10)) == sorted(values("kept", 10))


def test_poll_batches_under_read_committed_skips_aborted_batches_and_markers(broker: BrokerProcess, unique) -> None:
    topic = create(broker.bootstrap, unique("t"), 1)
    with transactional(broker.bootstrap, unique("txn")) as producer:
        for commit, prefix in ((True, "one"), (False, "two"), (True, "three")):
            producer.begin_transaction()
            for v in values(prefix, 5):
                producer.send(topic, v, partition=0)
            producer.flush()
            (producer.commit_transaction if commit else producer.abort_transaction)()
    with Consumer(broker.bootstrap, auto_offset_reset="earliest", isolation_level="read_committed") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        seen: list[bytes] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(seen) < 10 and time.monotonic() < deadline:
            for batch in consumer.poll_batches(timeout_ms=100):
                seen.extend(batch.values)
        assert seen == values("one", 5) + values("three", 5)
        # 15 records and 3 markers: the position is past the last marker.
        assert consumer.position(TopicPartition(topic, 0)) == 18


def test_a_second_producer_with_the_same_transactional_id_fences_the_first(broker: BrokerProcess, unique) -> None:
    topic = create(broker.bootstrap, unique("t"), 1)
    txn_id = unique("txn")
    zombie = transactional(broker.bootstrap, txn_id)
    zombie.begin_transaction()
    for v in values("zombie", 5):
        zombie.send(topic, v)
    zombie.flush()
    with transactional(broker.bootstrap, txn_id) as successor:  # fences the zombie, aborting its transaction
        with pytest.raises(ProducerFencedError):
            zombie.commit_transaction()
        with pytest.raises(ProducerFencedError):
            zombie.send(topic, b"late")
        with pytest.raises(ProducerFencedError):
            zombie.begin_transaction()
        zombie.close()
        successor.begin_transaction()
        for v in values("successor", 5):
            successor.send(topic, v)
        successor.commit_transaction()
    assert sorted(read_all(broker.bootstrap, topic, 1, "read_committed")) == sorted(values("successor", 5))


def test_offsets_sent_to_a_transaction_reach_the_group_only_when_it_commits(broker: BrokerProcess, unique) -> None:
    source, sink = create(broker.bootstrap, unique("in"), 2), create(broker.bootstrap, unique("out"), 1)
    group = unique("group")
    tp0, tp1 = TopicPartition(source, 0), TopicPartition(source, 1)
    with transactional(broker.bootstrap, unique("txn")) as producer, Consumer(
        broker.bootstrap, group_id=group, enable_auto_commit=False
    ) as reader:
        producer.begin_transaction()
        producer.send(sink, b"aborted")
        producer.send_offsets_to_transaction({tp0: 5, tp1: OffsetAndMetadata(6, "m")}, group)
        producer.abort_transaction()
        assert reader.committed([tp0, tp1]) == {tp0: None, tp1: None}

        producer.begin_transaction()
        producer.send(sink, b"committed")
        producer.send_offsets_to_transaction({tp0: 7, tp1: OffsetAndMetadata(8, "meta")}, group)
        producer.commit_transaction()
        committed = wait_for_committed(reader, [tp0, tp1])
        assert {tp: c.offset for tp, c in committed.items()} == {tp0: 7, tp1: 8}
        assert committed[tp1].metadata == "meta"
    assert read_all(broker.bootstrap, sink, 1, "read_committed") == [b"committed"]


def wait_for_committed(consumer: Consumer, partitions: list[TopicPartition]) -> dict:
    # The group sees transactional offsets once the commit marker reached the offsets topic.
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        committed = consumer.committed(partitions)
        if all(c is not None for c in committed.values()) or time.monotonic() > deadline:
            return committed
        time.sleep(0.05)


def test_send_offsets_to_transaction_accepts_a_consumers_group_metadata(broker: BrokerProcess, unique) -> None:
    source = create(broker.bootstrap, unique("in"), 1)
    tp = TopicPartition(source, 0)
    with Consumer(broker.bootstrap, group_id=unique("group"), enable_auto_commit=False) as consumer, transactional(
        broker.bootstrap, unique("txn")
    ) as producer:
        producer.begin_transaction()
        producer.send_offsets_to_transaction({tp: 3}, consumer.group_metadata())
        producer.commit_transaction()
        assert wait_for_committed(consumer, [tp])[tp].offset == 3


def test_transaction_calls_out_of_order_raise_invalid_txn_state(broker: BrokerProcess, unique) -> None:
    topic = create(broker.bootstrap, unique("t"), 1)
    with Producer(broker.bootstrap, transactional_id=unique("txn")) as producer:
        with pytest.raises(InvalidTxnStateError):
            producer.begin_transaction()  # before init_transactions
        producer.init_transactions()
        with pytest.raises(InvalidTxnStateError):
            producer.init_transactions()
        with pytest.raises(InvalidTxnStateError):
            producer.send(topic, b"outside a transaction")
        with pytest.raises(InvalidTxnStateError):
            producer.commit_transaction()
        with pytest.raises(InvalidTxnStateError):
            producer.abort_transaction()
        with pytest.raises(InvalidTxnStateError):
            producer.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, "g")
        producer.begin_transaction()
        with pytest.raises(InvalidTxnStateError):
            producer.begin_transaction()
        producer.commit_transaction()  # an empty transaction commits without a word to the coordinator
    with Producer(broker.bootstrap) as plain:
        with pytest.raises(InvalidTxnStateError):
            plain.init_transactions()
    with pytest.raises(ValueError):
        Producer(broker.bootstrap, transactional_id="x", enable_idempotence=False)
    with pytest.raises(ValueError):
        Producer(broker.bootstrap, transactional_id="x", acks=1)


def test_a_record_the_broker_refuses_makes_commit_fail_and_the_producer_recovers_after_abort(
    broker: BrokerProcess, unique
) -> None:
    topic = create(broker.bootstrap, unique("t"), 1, {"max.message.bytes": "2000"})
    with transactional(broker.bootstrap, unique("txn")) as producer:
        producer.begin_transaction()
        small = producer.send(topic, b"small")
        producer.flush()
        big = producer.send(topic, b"x" * 10_000)
        with pytest.raises(TransactionAbortableError):
            producer.commit_transaction()
        assert small.exception() is None and big.exception() is not None
        with pytest.raises(TransactionAbortableError):
            producer.send(topic, b"refused until the abort")
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send(topic, b"after the abort")
        producer.commit_transaction()
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == [b"after the abort"]


def test_closing_a_producer_aborts_its_open_transaction(broker: BrokerProcess, unique) -> None:
    topic = create(broker.bootstrap, unique("t"), 1)
    txn_id = unique("txn")
    producer = transactional(broker.bootstrap, txn_id)
    producer.begin_transaction()
    for v in values("open", 5):
        producer.send(topic, v)
    producer.flush()
    producer.close()
    # The abort marker lets read_committed readers past the records at once,
    # and the next instance starts without waiting for the transaction to time out.
    started = time.monotonic()
    with transactional(broker.bootstrap, txn_id) as successor:
        successor.begin_transaction()
        successor.send(topic, b"next")
        successor.commit_transaction()
    assert time.monotonic() - started < TXN_TIMEOUT_MS / 1000
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == [b"next"]
    assert sorted(read_all(broker.bootstrap, topic, 1, "read_uncommitted")) == sorted(values("open", 5) + [b"next"])
