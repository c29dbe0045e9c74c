"""A group's offsets added to a transaction handed off by its producer: visible exactly when it commits."""

from __future__ import annotations

import pytest

from spate.client import Admin, ErrorCode, OffsetAndMetadata, Producer, TopicPartition
from spate.client.producer.transaction_completion import complete_transaction
from spate.client.producer.transaction_offsets import (
    TransactionOffsetsError,
    TransactionOffsetsWriter,
    add_offsets_to_open_transaction,
)
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all
from tests.spark.sink.test_transaction_completion import open_transaction


@pytest.fixture
def topics(broker, unique) -> tuple[str, str]:
    """(output topic the transaction writes, input topic whose offsets the group commits)."""
    output, source = unique("out"), unique("in")
    create_topic(broker.bootstrap, output)
    create_topic(broker.bootstrap, source, 2)
    return output, source


def group_offsets(broker, group: str, source: str) -> dict[int, int]:
    partitions = [TopicPartition(source, p) for p in range(2)]
    with Admin(broker.bootstrap) as admin:
        found = admin.list_group_offsets(group, partitions, timeout_ms=30_000)
    return {tp.partition: committed.offset for tp, committed in found.items() if committed is not None}


def test_offsets_become_visible_when_the_transaction_commits(broker, unique, topics) -> None:
    output, source = topics
    group = unique("g")
    txn = open_transaction(broker.bootstrap, unique("tx"), output, [b"a"])

    add_offsets_to_open_transaction(
        broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, group,
        {TopicPartition(source, 0): 7, TopicPartition(source, 1): OffsetAndMetadata(3, "batch 0")},
        timeout_ms=30_000,
    )
    assert group_offsets(broker, group, source) == {}

    complete_transaction(broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=True)

    assert group_offsets(broker, group, source) == {0: 7, 1: 3}
    assert [r.value for r in read_all(broker.bootstrap, {output: 1}, expect=1, quiet_s=0.5)] == [b"a"]


def test_offsets_of_an_aborted_transaction_never_reach_the_group(broker, unique, topics) -> None:
    output, source = topics
    group = unique("g")
    txn = open_transaction(broker.bootstrap, unique("tx"), output, [b"a"])
    with TransactionOffsetsWriter(broker.bootstrap) as writer:
        writer.add_offsets(txn, group, {TopicPartition(source, 0): 5}, timeout_ms=30_000)

    complete_transaction(broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=False)

    assert group_offsets(broker, group, source) == {}


def test_adding_offsets_to_a_fenced_transaction_is_refused_with_producer_fenced(broker, unique, topics) -> None:
    output, source = topics
    transactional_id = unique("tx")
    stale = open_transaction(broker.bootstrap, transactional_id, output, [b"stale"])
    successor = Producer(broker.bootstrap, transactional_id=transactional_id)
    successor.init_transactions(30_000)  # aborts the stale transaction under a new epoch
    successor.close()

    with TransactionOffsetsWriter(broker.bootstrap) as writer, pytest.raises(TransactionOffsetsError) as info:
        writer.add_offsets(stale, unique("g"), {TopicPartition(source, 0): 1}, timeout_ms=30_000)
    assert info.value.code in (ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH)
    assert info.value.transaction == stale


def test_no_offsets_is_a_no_op_and_negative_offsets_are_rejected(broker, unique, topics) -> None:
    output, source = topics
    txn = open_transaction(broker.bootstrap, unique("tx"), output, [b"a"])
    with TransactionOffsetsWriter(broker.bootstrap) as writer:
        writer.add_offsets(txn, unique("g"), {}, timeout_ms=30_000)
        with pytest.raises(ValueError):
            writer.add_offsets(txn, unique("g"), {TopicPartition(source, 0): -1}, timeout_ms=30_000)
        with pytest.raises(ValueError):
            writer.add_offsets(txn, "", {TopicPartition(source, 0): 1}, timeout_ms=30_000)
    complete_transaction(broker.bootstrap, txn.transactional_id, txn.producer_id, txn.producer_epoch, commit=False)
