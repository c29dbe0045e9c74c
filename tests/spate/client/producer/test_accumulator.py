"""The accumulator's batching, linger, size, drain and expiry rules, driven by a hand-held clock."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from spate.client.producer.accumulator import RecordAccumulator
from spate.client.producer.batch import ProducerBatch
from spate.structs import TopicPartition

A0 = TopicPartition("a", 0)
A1 = TopicPartition("a", 1)
B0 = TopicPartition("b", 0)
LEADERS = {A0: 1, A1: 2, B0: 1}


def leader_of(tp: TopicPartition) -> int:
    return LEADERS.get(tp, -1)


def append(acc: RecordAccumulator, tp: TopicPartition, now: float, value: bytes = b"v" * 10):
    return acc.append(tp, 1000, None, value, (), Future(), now)


def accumulator(**overrides) -> RecordAccumulator:
    settings = {"batch_size": 1000, "linger": 0.005, "delivery_timeout": 120.0}
    settings.update(overrides)
    return RecordAccumulator(**settings)


def test_records_of_one_partition_share_a_batch_until_it_is_full() -> None:
    acc = accumulator()
    first = append(acc, A0, 0.0)
    second = append(acc, A0, 0.0)
    assert first.new_batch and not second.new_batch
    assert first.batch is second.batch and second.batch.record_count == 2


def test_a_record_that_does_not_fit_starts_a_new_batch_and_closes_the_old_one() -> None:
    acc = accumulator(batch_size=200)
    first = append(acc, A0, 0.0, b"x" * 120)
    second = append(acc, A0, 0.0, b"y" * 120)
    assert second.new_batch and second.batch_closed
    assert second.batch is not first.batch


def test_filling_a_batch_to_capacity_reports_it_closed() -> None:
    acc = accumulator(batch_size=100)
    result = append(acc, A0, 0.0, b"x" * 200)
    assert result.batch_closed and result.batch.is_full


def test_a_partition_is_not_ready_before_linger_passes() -> None:
    acc = accumulator(linger=0.005)
    append(acc, A0, 10.0)
    check = acc.ready(leader_of, 10.002)
    assert check.nodes == set()
    assert check.next_check == pytest.approx(0.003)


def test_a_partition_is_ready_once_linger_passes() -> None:
    acc = accumulator(linger=0.005)
    append(acc, A0, 10.0)
    assert acc.ready(leader_of, 10.005).nodes == {1}


def test_a_full_batch_is_ready_before_linger_passes() -> None:
    acc = accumulator(linger=100.0, batch_size=100)
    append(acc, A0, 0.0, b"x" * 200)
    assert acc.ready(leader_of, 0.0).nodes == {1}


def test_a_partition_with_a_second_batch_is_ready_at_once() -> None:
    acc = accumulator(linger=100.0, batch_size=200)
    append(acc, A0, 0.0, b"x" * 120)
    append(acc, A0, 0.0, b"y" * 120)
    assert acc.ready(leader_of, 0.0).nodes == {1}


def test_flush_and_close_make_every_partition_ready_at_once() -> None:
    acc = accumulator(linger=100.0)
    append(acc, A0, 0.0)
    acc.begin_flush()
    assert acc.ready(leader_of, 0.0).nodes == {1}
    acc.end_flush()
    assert acc.ready(leader_of, 0.0).nodes == set()
    acc.closing = True
    assert acc.ready(leader_of, 0.0).nodes == {1}


def test_partitions_without_a_known_leader_report_their_topic() -> None:
    acc = accumulator(linger=0.0)
    append(acc, TopicPartition("lost", 0), 0.0)
    check = acc.ready(leader_of, 1.0)
    assert check.nodes == set() and check.unknown_leader_topics == {"lost"}


def test_drain_takes_one_batch_per_partition_for_the_ready_nodes_only() -> None:
    acc = accumulator(linger=0.0, batch_size=100)
    for _ in range(3):
        append(acc, A0, 0.0, b"x" * 150)
    append(acc, B0, 0.0)
    append(acc, A1, 0.0)
    drained = acc.drain(leader_of, {1}, 1 << 20, 0.0)
    assert set(drained) == {1}
    assert sorted(b.topic_partition for b in drained[1]) == [A0, B0]
    assert acc.drain(leader_of, {1}, 1 << 20, 0.0)[1][0].topic_partition == A0


def test_drain_respects_the_request_size_but_always_sends_one_batch() -> None:
    acc = accumulator(linger=0.0, batch_size=10_000)
    append(acc, A0, 0.0, b"x" * 3000)
    append(acc, B0, 0.0, b"y" * 3000)
    drained = acc.drain(leader_of, {1}, 1000, 0.0)
    assert len(drained[1]) == 1
    assert len(acc.drain(leader_of, {1}, 1000, 0.0)[1]) == 1


def test_drain_rotates_its_starting_partition_so_none_starves() -> None:
    acc = accumulator(linger=0.0, batch_size=10_000)
    firsts = set()
    for _ in range(4):
        append(acc, A0, 0.0, b"x" * 3000)
        append(acc, B0, 0.0, b"y" * 3000)
        firsts.add(acc.drain(leader_of, {1}, 1000, 0.0)[1][0].topic_partition)
        acc.drain(leader_of, {1}, 1000, 0.0)
    assert firsts == {A0, B0}


def test_drained_batches_take_no_more_records() -> None:
    acc = accumulator(linger=0.0)
    first = append(acc, A0, 0.0)
    acc.drain(leader_of, {1}, 1 << 20, 0.0)
    later = append(acc, A0, 0.0)
    assert later.new_batch and later.batch is not first.batch


def test_a_retry_waits_out_its_backoff() -> None:
    acc = accumulator(linger=0.0)
    batch = append(acc, A0, 0.0).batch
    acc.drain(leader_of, {1}, 1 << 20, 0.0)
    batch.attempts, batch.retry_at = 1, 5.0
    acc.reenqueue(batch)
    check = acc.ready(leader_of, 4.0)
    assert check.nodes == set() and check.next_check == pytest.approx(1.0)
    assert acc.drain(leader_of, {1}, 1 << 20, 4.0) == {}
    assert acc.ready(leader_of, 5.0).nodes == {1}
    assert acc.drain(leader_of, {1}, 1 << 20, 5.0)[1] == [batch]


def test_reenqueued_batches_go_ahead_of_new_ones_in_sequence_order() -> None:
    acc = accumulator(linger=0.0)
    batches = []
    for sequence in (0, 1, 2):
        batch = append(acc, A0, 0.0).batch
        acc.drain(leader_of, {1}, 1 << 20, 0.0)
        batch.set_producer_state(5, 0, sequence, False)
        batches.append(batch)
    fresh = append(acc, A0, 0.0).batch
    for batch in (batches[2], batches[0], batches[1]):
        acc.reenqueue(batch)
    order = [acc.drain(leader_of, {1}, 1 << 20, 0.0)[1][0] for _ in range(4)]
    assert order == [*batches, fresh]


def test_can_send_holds_back_a_partition_and_leaves_others_alone() -> None:
    acc = accumulator(linger=0.0)
    held = append(acc, A0, 0.0).batch
    append(acc, B0, 0.0)
    drained = acc.drain(leader_of, {1}, 1 << 20, 0.0, can_send=lambda b: b is not held)
    assert [b.topic_partition for b in drained[1]] == [B0]
    assert acc.ready(leader_of, 0.0, can_send=lambda b: b is not held).nodes == set()


def test_batches_expire_after_the_delivery_timeout() -> None:
    acc = accumulator(delivery_timeout=10.0, linger=100.0)
    old = append(acc, A0, 0.0).batch
    young = append(acc, A1, 8.0).batch
    assert acc.ready(leader_of, 1.0).next_check == pytest.approx(9.0)
    assert acc.expire(9.9) == []
    assert acc.expire(10.0) == [old]
    assert list(acc.queued_batches()) == [young]


def test_abort_all_empties_every_queue() -> None:
    acc = accumulator()
    append(acc, A0, 0.0)
    append(acc, B0, 0.0)
    assert len(acc.abort_all()) == 2
    assert not acc.has_batches()


@pytest.mark.parametrize("bad", [{"batch_size": 0}, {"linger": -1.0}])
def test_nonsensical_settings_are_refused(bad) -> None:
    with pytest.raises(ValueError):
        accumulator(**bad)


def test_batches_are_producer_batches_for_the_right_partition() -> None:
    acc = accumulator()
    result = append(acc, B0, 3.0)
    assert isinstance(result.batch, ProducerBatch)
    assert (result.batch.topic_partition, result.batch.created_at) == (B0, 3.0)
