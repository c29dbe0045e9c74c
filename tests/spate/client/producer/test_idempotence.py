"""Producer ids and per-partition sequence numbers for idempotent delivery."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from spate.client.producer.batch import ProducerBatch
from spate.client.producer.idempotence import SEQUENCE_LIMIT
from spate.client.producer.transaction_manager import TransactionManager
from spate.structs import TopicPartition

TP = TopicPartition("t", 0)


def batch(records: int, tp: TopicPartition = TP) -> ProducerBatch:
    b = ProducerBatch(tp, 0.0, capacity=1 << 20)
    for i in range(records):
        b.try_append(i, None, b"v", (), Future())
    return b


def manager() -> TransactionManager:
    txn = TransactionManager()
    txn.set_producer_id(1000, 0)
    return txn


def test_sequences_count_records_per_partition_from_zero() -> None:
    txn = manager()
    a, b, other = batch(3), batch(2), batch(4, TopicPartition("t", 1))
    for x in (a, b, other):
        txn.assign_sequence(x)
    assert (a.base_sequence, b.base_sequence, other.base_sequence) == (0, 3, 0)
    assert (a.producer_id, a.producer_epoch) == (1000, 0)


def test_a_retried_batch_keeps_its_sequence() -> None:
    txn = manager()
    a = batch(3)
    txn.assign_sequence(a)
    txn.assign_sequence(a)
    later = batch(1)
    txn.assign_sequence(later)
    assert (a.base_sequence, later.base_sequence) == (0, 3)


def test_sequences_wrap_at_two_to_the_thirty_one() -> None:
    txn = manager()
    big = batch(1)
    big.record_count = SEQUENCE_LIMIT - 1  # as if that many records had gone before
    txn.assign_sequence(big)
    nxt = batch(1)
    txn.assign_sequence(nxt)
    assert nxt.base_sequence == SEQUENCE_LIMIT - 1
    last = batch(1)
    txn.assign_sequence(last)
    assert last.base_sequence == 0


def test_new_batches_may_always_be_sent() -> None:
    txn = manager()
    in_flight = batch(1)
    txn.assign_sequence(in_flight)
    txn.sent(in_flight)
    assert txn.can_send(batch(1))


def test_a_retry_waits_until_nothing_else_of_its_partition_is_in_flight() -> None:
    txn = manager()
    first, second = batch(1), batch(1)
    for b in (first, second):
        txn.assign_sequence(b)
        txn.sent(b)
    txn.returned(first)
    assert not txn.can_send(first)
    txn.returned(second)
    assert txn.can_send(first)


def test_only_the_oldest_unacknowledged_batch_is_next_to_acknowledge() -> None:
    txn = manager()
    first, second = batch(2), batch(2)
    txn.assign_sequence(first)
    txn.assign_sequence(second)
    assert txn.is_next_to_acknowledge(first) and not txn.is_next_to_acknowledge(second)
    txn.acknowledged(first)
    assert txn.is_next_to_acknowledge(second)


def test_a_reset_makes_old_batches_stale_and_numbers_them_afresh() -> None:
    txn = manager()
    old = batch(5)
    txn.assign_sequence(old)
    txn.reset_producer_id()
    assert not txn.has_producer_id
    txn.set_producer_id(2000, 0)
    assert txn.is_stale(old) and txn.can_send(old)
    txn.assign_sequence(old)
    assert (old.producer_id, old.base_sequence) == (2000, 0)
    assert not txn.is_stale(old)


def test_an_invalid_producer_identity_is_refused() -> None:
    with pytest.raises(ValueError):
        TransactionManager().set_producer_id(-1, 0)
