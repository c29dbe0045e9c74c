"""Handing an open transaction to another process: the producer's side and the end of the transaction elsewhere.

``prepare_handoff`` waits for every record of the transaction and returns
its identity; ``close`` then leaves the transaction open (a plain close
aborts it), and whoever holds the identity commits or aborts it with EndTxn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from spate.client import (
    Admin,
    InvalidTxnStateError,
    NewTopic,
    Producer,
    TransactionAbortableError,
)
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.transaction_completion import (
    TransactionCompleter,
    hand_off_transaction,
)
from tests.spate.client.group_brokers import (
    TIMEOUT_S,
    read_all,
    start_broker,
    unique_names,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from start_broker(tmp_path_factory, "txn-handoff")


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    return unique_names(request)


def create(bootstrap: str, name: str, configs: dict[str, str] | None = None) -> str:
    with Admin(bootstrap) as admin:
        admin.create_topics([NewTopic(name, 1, 1, configs or {})])
    return name


def transactional(bootstrap: str, txn_id: str) -> Producer:
    producer = Producer(bootstrap, transactional_id=txn_id, linger_ms=2, transaction_timeout_ms=30_000,
                        max_block_ms=int(TIMEOUT_S * 1000))
    producer.init_transactions()
    return producer


def end_elsewhere(bootstrap: str, transaction: OpenTransaction, *, commit: bool) -> None:
    with TransactionCompleter(bootstrap) as completer:
        completer.complete(transaction, commit=commit, timeout_ms=TIMEOUT_S * 1000)


def test_prepare_handoff_returns_the_identity_and_close_leaves_the_transaction_open(broker, unique) -> None:
    topic = create(broker.bootstrap, unique("t"))
    producer = transactional(broker.bootstrap, unique("txn"))
    producer.begin_transaction()
    futures = [producer.send(topic, f"r{i}".encode()) for i in range(20)]

    handed = producer.prepare_handoff()

    assert all(f.done() and f.exception() is None for f in futures)
    assert handed == producer.transaction_identity()
    assert handed.producer_id >= 0 and handed.producer_epoch >= 0
    producer.close()
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == []

    end_elsewhere(broker.bootstrap, handed, commit=True)
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == [f"r{i}".encode() for i in range(20)]


def test_a_handed_off_transaction_aborted_elsewhere_is_never_read(broker, unique) -> None:
    topic = create(broker.bootstrap, unique("t"))
    producer = transactional(broker.bootstrap, unique("txn"))
    producer.begin_transaction()
    producer.send(topic, b"dropped")
    handed = hand_off_transaction(producer, timeout_ms=TIMEOUT_S * 1000)
    assert producer.closed

    end_elsewhere(broker.bootstrap, handed, commit=False)
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == []
    assert read_all(broker.bootstrap, topic, 1, "read_uncommitted") == [b"dropped"]


def test_after_prepare_handoff_the_producer_refuses_sends_and_transaction_calls(broker, unique) -> None:
    topic = create(broker.bootstrap, unique("t"))
    producer = transactional(broker.bootstrap, unique("txn"))
    try:
        producer.begin_transaction()
        producer.send(topic, b"one")
        handed = producer.prepare_handoff()
        assert producer.prepare_handoff() == handed
        with pytest.raises(InvalidTxnStateError):
            producer.send(topic, b"late")
        with pytest.raises(InvalidTxnStateError):
            producer.commit_transaction()
    finally:
        producer.close()
    end_elsewhere(broker.bootstrap, handed, commit=True)
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == [b"one"]


def test_close_with_abort_open_transaction_false_keeps_the_transaction_for_its_identity(broker, unique) -> None:
    topic = create(broker.bootstrap, unique("t"))
    producer = transactional(broker.bootstrap, unique("txn"))
    producer.begin_transaction()
    producer.send(topic, b"kept")
    producer.flush()
    identity = producer.transaction_identity()
    producer.close(abort_open_transaction=False)
    assert producer.transaction_identity() == identity

    end_elsewhere(broker.bootstrap, identity, commit=True)
    assert read_all(broker.bootstrap, topic, 1, "read_committed") == [b"kept"]


def test_prepare_handoff_needs_an_open_healthy_transaction(broker, unique) -> None:
    plain = Producer(broker.bootstrap)
    try:
        with pytest.raises(InvalidTxnStateError):
            plain.prepare_handoff()
        with pytest.raises(InvalidTxnStateError):
            plain.transaction_identity()
    finally:
        plain.close()

    uninitialised = Producer(broker.bootstrap, transactional_id=unique("new"))
    try:
        with pytest.raises(InvalidTxnStateError):
            uninitialised.transaction_identity()
    finally:
        uninitialised.close()

    topic = create(broker.bootstrap, unique("t"), {"max.message.bytes": "2000"})
    producer = transactional(broker.bootstrap, unique("txn"))
    try:
        with pytest.raises(InvalidTxnStateError):
            producer.prepare_handoff()  # no transaction begun
        producer.begin_transaction()
        producer.send(topic, b"x" * 10_000)  # refused by the broker: the transaction must abort
        with pytest.raises(TransactionAbortableError):
            producer.prepare_handoff()
        producer.abort_transaction()
    finally:
        producer.close()
