"""Zombie fencing, transaction timeouts and broker crashes: every transaction is all or nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer
from kafka import KafkaProducer

from broker_core.coordinator.partitioning import partition_for
from broker_core.coordinator.transaction.txn_log import (
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import TxnState
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from spate.records import Record, build_batch, iter_decoded_batches
from tests.scenarios.groups.topics import create_topic
from tests.scenarios.transactions.conftest import TXN_BROKER_OVERRIDES
from tests.scenarios.transactions.readers import (
    read_confluent,
    read_kafka_python,
    write_sentinels,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

STATE_PARTITIONS = int(TXN_BROKER_OVERRIDES["transaction.state.log.num.partitions"])


def transactional(bootstrap: str, txn_id: str, **extra) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5, **extra})
    producer.init_transactions(30)
    return producer


def produce_open_transaction(producer: Producer, topics: dict[str, int], tag: str, count: int = 20) -> list[bytes]:
    """Begin a transaction, write ``count`` records spread over every partition, leave it open."""
    producer.begin_transaction()
    targets = [(t, p) for t, n in topics.items() for p in range(n)]
    values = [f"{tag}:{i}".encode() for i in range(count)]
    for i, value in enumerate(values):
        topic, partition = targets[i % len(targets)]
        producer.produce(topic, value=value, partition=partition)
    if producer.flush(30):
        raise AssertionError("transactional records were not delivered")
    return values


def two_topics(bootstrap: str, unique) -> dict[str, int]:
    """A topic of two partitions and one of one: name → partition count."""
    names = {unique("a"): 2, unique("b"): 1}
    for name, count in names.items():
        create_topic(bootstrap, name, count)
    return names


@pytest.fixture
def topics(broker, unique) -> dict[str, int]:
    return two_topics(broker.bootstrap, unique)


# --- zombies -------------------------------------------------------------------------------------


def test_confluent_zombie_is_fenced_and_its_transaction_aborted(broker, topics, unique):
    txn_id = unique("txn")
    zombie = transactional(broker.bootstrap, txn_id)
    produce_open_transaction(zombie, topics, "zombie")

    successor = transactional(broker.bootstrap, txn_id)  # returns once the zombie's transaction is aborted
    kept = produce_open_transaction(successor, topics, "successor", count=6)
    successor.commit_transaction(30)

    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(10)
    assert raised.value.args[0].fatal() or "fenc" in str(raised.value).lower()

    write_sentinels(broker.bootstrap, topics)
    assert sorted(read_confluent(broker.bootstrap, topics, "read_committed")) == sorted(kept)


def test_kafka_python_zombie_is_fenced(broker, topics, unique):
    txn_id = unique("txn")
    zombie = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=txn_id)
    zombie.init_transactions()
    zombie.begin_transaction()
    for i in range(10):
        zombie.send(next(iter(topics)), value=f"zombie:{i}".encode(), partition=i % 2)
    zombie.flush()

    successor = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id=txn_id)
    successor.init_transactions()
    successor.begin_transaction()
    successor.send(next(iter(topics)), value=b"successor", partition=0)
    successor.commit_transaction()

    with pytest.raises(Exception) as raised:
        zombie.commit_transaction()
    assert "fenc" in type(raised.value).__name__.lower() or "epoch" in str(raised.value).lower()
    zombie.close(timeout=1)
    successor.close()

    write_sentinels(broker.bootstrap, topics)
    assert read_kafka_python(broker.bootstrap, topics, "read_committed") == [b"successor"]


# --- timeouts ------------------------------------------------------------------------------------


def test_read_committed_consumer_stuck_behind_an_open_transaction_resumes_when_it_times_out(broker, topics, unique):
    stalled = transactional(broker.bootstrap, unique("txn"), **{"transaction.timeout.ms": 2000})
    hidden = produce_open_transaction(stalled, topics, "stalled")
    after = [f"after:{i}".encode() for i in range(5)]
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    for i, value in enumerate(after):
        plain.produce(next(iter(topics)), value=value, partition=i % 2)
    plain.flush(30)
    write_sentinels(broker.bootstrap, topics)

    started = time.monotonic()
    seen = read_confluent(broker.bootstrap, topics, "read_committed")  # blocks on the LSO until the abort
    assert sorted(seen) == sorted(after)
    assert not set(seen) & set(hidden)
    assert time.monotonic() - started < 20
    with pytest.raises(KafkaException):
        stalled.commit_transaction(10)


# --- broker crashes --------------------------------------------------------------------------------


@pytest.fixture
def own_topics(own_broker, unique) -> dict[str, int]:
    return two_topics(own_broker.bootstrap, unique)


def test_broker_killed_during_a_transaction_loses_it_whole(own_broker, own_topics, unique):
    txn_id = unique("txn")
    producer = transactional(own_broker.bootstrap, txn_id)
    written = produce_open_transaction(producer, own_topics, "open")
    own_broker.restart(clean=False)

    transactional(own_broker.bootstrap, txn_id)  # the next instance aborts what was left open
    write_sentinels(own_broker.bootstrap, own_topics)
    assert read_confluent(own_broker.bootstrap, own_topics, "read_committed") == []
    assert sorted(read_confluent(own_broker.bootstrap, own_topics, "read_uncommitted")) == sorted(written)


def test_broker_killed_right_after_a_commit_keeps_it_whole(own_broker, own_topics, unique):
    producer = transactional(own_broker.bootstrap, unique("txn"))
    written = produce_open_transaction(producer, own_topics, "committed")
    producer.commit_transaction(30)
    own_broker.restart(clean=False)

    write_sentinels(own_broker.bootstrap, own_topics)
    assert sorted(read_confluent(own_broker.bootstrap, own_topics, "read_committed")) == sorted(written)


def _state_log(broker, txn_id: str) -> Path:
    return broker.log_dir / f"__transaction_state-{partition_for(txn_id, STATE_PARTITIONS)}"


def _rewrite_state(directory: Path, txn_id: str, state: TxnState) -> TxnMetadata:
    """Append what the coordinator writes before its markers: the id's last value, now in ``state``."""
    log = LocalLog.open(directory, LogConfig(), clock=lambda: int(time.time() * 1000))
    try:
        last = None
        for batch in iter_decoded_batches(log.read(0, 1 << 24, max_offset=log.log_end_offset).read_bytes()):
            for record in batch.records:
                if decode_key(record.key) == txn_id:
                    last = decode_value(txn_id, record.value)
        assert last is not None and last.state is TxnState.ONGOING, last
        prepared = last.prepared(commit=state is TxnState.PREPARE_COMMIT, now=last.last_update_ms + 1)
        log.append(build_batch([Record(0, prepared.last_update_ms, encode_key(txn_id), encode_value(prepared))]))
        log.flush()
    finally:
        log.close()
    return prepared


@pytest.mark.parametrize("prepared, visible", [(TxnState.PREPARE_COMMIT, True), (TxnState.PREPARE_ABORT, False)])
def test_crash_between_prepare_and_markers_is_completed_on_restart(own_broker, own_topics, unique, prepared, visible):
    txn_id = unique("txn")
    producer = transactional(own_broker.bootstrap, txn_id)
    written = produce_open_transaction(producer, own_topics, "prepared")
    own_broker.kill()
    _rewrite_state(_state_log(own_broker, txn_id), txn_id, prepared)
    own_broker.start()

    write_sentinels(own_broker.bootstrap, own_topics)
    seen = read_confluent(own_broker.bootstrap, own_topics, "read_committed")
    assert sorted(seen) == (sorted(written) if visible else [])
