"""Ending another producer's transaction: hand-off from the producer, EndTxn from elsewhere."""

from __future__ import annotations

import pytest

from spate.client import ErrorCode, Producer
from spate.client.errors import InvalidTxnStateError
from spate.client.producer.transaction_completion import (
    OpenTransaction,
    TransactionCompleter,
    TransactionCompletionError,
    complete_transaction,
    complete_transactions,
    hand_off_transaction,
)
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all


def open_transaction(bootstrap: str, transactional_id: str, topic: str, values: list[bytes]) -> OpenTransaction:
    producer = Producer(bootstrap, transactional_id=transactional_id)
    producer.init_transactions(30_000)
    producer.begin_transaction()
    for value in values:
        producer.send(topic, value)
    return hand_off_transaction(producer, timeout_ms=30_000)


@pytest.fixture
def topic(broker, unique) -> str:
    name = unique("t")
    create_topic(broker.bootstrap, name)
    return name


def visible(broker, topic: str, expect: int | None = None) -> list[bytes]:
    return sorted(r.value for r in read_all(broker.bootstrap, {topic: 1}, expect=expect, quiet_s=1.0))


def test_handed_off_transaction_stays_open_until_committed_elsewhere(broker, unique, topic) -> None:
    txn = open_transaction(broker.bootstrap, unique("tx"), topic, [b"1", b"2"])
    assert visible(broker, topic) == []

    complete_transaction(broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=True)

    assert visible(broker, topic, expect=2) == [b"1", b"2"]


def test_repeating_a_commit_that_already_completed_succeeds(broker, unique, topic) -> None:
    txn = open_transaction(broker.bootstrap, unique("tx"), topic, [b"once"])
    with TransactionCompleter(broker.bootstrap) as completer:
        completer.complete(txn, commit=True)
        completer.complete(txn, commit=True)
    assert visible(broker, topic, expect=1) == [b"once"]


def test_aborted_elsewhere_is_never_visible(broker, unique, topic) -> None:
    txn = open_transaction(broker.bootstrap, unique("tx"), topic, [b"gone"])
    complete_transaction(broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=False)
    assert visible(broker, topic) == []


def test_commit_of_a_fenced_transaction_is_refused_with_producer_fenced(broker, unique, topic) -> None:
    transactional_id = unique("tx")
    stale = open_transaction(broker.bootstrap, transactional_id, topic, [b"stale"])
    successor = Producer(broker.bootstrap, transactional_id=transactional_id)
    successor.init_transactions(30_000)  # aborts the stale transaction under a new epoch
    successor.close()

    with pytest.raises(TransactionCompletionError) as info:
        complete_transactions(broker.bootstrap, [stale], commit=True)
    assert info.value.code == ErrorCode.PRODUCER_FENCED
    assert info.value.transaction == stale
    assert visible(broker, topic) == []


def test_every_transaction_is_tried_and_the_refused_ones_are_listed(broker, unique, topic) -> None:
    good = open_transaction(broker.bootstrap, unique("good"), topic, [b"kept"])
    unknown = OpenTransaction(unique("never-initialized"), 424242, 0)
    with pytest.raises(TransactionCompletionError) as info:
        complete_transactions(broker.bootstrap, [unknown, good], commit=True)
    assert [txn for txn, _ in info.value.failures] == [unknown]
    assert info.value.code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert visible(broker, topic, expect=1) == [b"kept"]


def test_hand_off_needs_an_open_transaction(broker, unique) -> None:
    plain = Producer(broker.bootstrap)
    try:
        with pytest.raises(InvalidTxnStateError):
            hand_off_transaction(plain)
    finally:
        plain.close()
    idle = Producer(broker.bootstrap, transactional_id=unique("idle"))
    try:
        idle.init_transactions(30_000)
        with pytest.raises(InvalidTxnStateError):
            hand_off_transaction(idle)
    finally:
        idle.close()


def test_open_transaction_rejects_a_missing_identity() -> None:
    with pytest.raises(ValueError):
        OpenTransaction("", 1, 0)
    with pytest.raises(ValueError):
        OpenTransaction("t", -1, 0)
