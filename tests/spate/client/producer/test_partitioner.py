"""Kafka's default partitioner: murmur2 for keys, one sticky partition per topic for null keys."""

from __future__ import annotations

import random

from spate.client.producer.murmur2 import partition_for_key
from spate.client.producer.partitioner import DefaultPartitioner, Partitioner

ALL = (0, 1, 2, 3, 4, 5)


def test_keyed_records_use_murmur2_whatever_the_sticky_state() -> None:
    partitioner = DefaultPartitioner(random.Random(1))
    partitioner.partition("t", None, 6, ALL)
    for key in (b"a", b"customer-7", b""):
        assert partitioner.partition("t", key, 6, ALL) == partition_for_key(key, 6)


def test_null_key_records_stay_on_one_partition_until_its_batch_closes() -> None:
    partitioner = DefaultPartitioner(random.Random(2))
    first = partitioner.partition("t", None, 6, ALL)
    assert {partitioner.partition("t", None, 6, ALL) for _ in range(100)} == {first}


def test_closing_the_sticky_batch_moves_to_a_different_partition() -> None:
    partitioner = DefaultPartitioner(random.Random(3))
    for _ in range(50):
        current = partitioner.partition("t", None, 6, ALL)
        partitioner.batch_closed("t", current, 6, ALL)
        assert partitioner.partition("t", None, 6, ALL) != current


def test_closing_some_other_partitions_batch_keeps_the_sticky_partition() -> None:
    partitioner = DefaultPartitioner(random.Random(4))
    current = partitioner.partition("t", None, 6, ALL)
    partitioner.batch_closed("t", (current + 1) % 6, 6, ALL)
    assert partitioner.partition("t", None, 6, ALL) == current


def test_sticky_choice_prefers_partitions_that_have_a_leader() -> None:
    partitioner = DefaultPartitioner(random.Random(5))
    seen = set()
    for _ in range(40):
        current = partitioner.partition("t", None, 6, (2, 4))
        seen.add(current)
        partitioner.batch_closed("t", current, 6, (2, 4))
    assert seen == {2, 4}


def test_sticky_choice_falls_back_to_any_partition_when_none_has_a_leader() -> None:
    partitioner = DefaultPartitioner(random.Random(6))
    assert 0 <= partitioner.partition("t", None, 3, ()) < 3


def test_topics_have_independent_sticky_partitions() -> None:
    partitioner = DefaultPartitioner(random.Random(7))
    a = partitioner.partition("a", None, 6, ALL)
    partitioner.batch_closed("b", a, 6, ALL)
    assert partitioner.partition("a", None, 6, ALL) == a


def test_sticky_partitioning_spreads_batches_over_every_partition_in_time() -> None:
    partitioner = DefaultPartitioner(random.Random(8))
    used = set()
    for _ in range(200):
        current = partitioner.partition("t", None, 6, ALL)
        used.add(current)
        partitioner.batch_closed("t", current, 6, ALL)
    assert used == set(ALL)


def test_a_sticky_partition_beyond_the_current_partition_count_is_replaced() -> None:
    for seed in range(100):
        partitioner = DefaultPartitioner(random.Random(seed))
        if partitioner.partition("t", None, 6, ALL) >= 3:
            break
    assert partitioner.partition("t", None, 3, (0, 1, 2)) in (0, 1, 2)


def test_default_partitioner_satisfies_the_partitioner_protocol() -> None:
    assert isinstance(DefaultPartitioner(), Partitioner)
