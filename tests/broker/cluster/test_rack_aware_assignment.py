"""Rack-aware replica placement: Kafka's rack-alternated broker list and its skipping rules."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.cluster.assignment import assign_added_partitions, assign_replicas, rack_alternated_brokers
from broker_core.cluster.errors import InvalidReplicaAssignmentError

# Kafka's AdminRackAwareTest example: six brokers over three racks.
RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_brokers_alternate_between_racks_in_rack_order() -> None:
    assert rack_alternated_brokers(RACKS) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({0: "a", 1: "a", 2: "b", 3: "c"}) == [0, 2, 3, 1]


def test_placement_matches_kafkas_for_a_fixed_start() -> None:
    assignment = assign_replicas(RACKS, 7, 3, start_index=0, racks=RACKS)
    assert assignment == {
        0: (0, 3, 1),
        1: (3, 1, 5),
        2: (1, 5, 4),
        3: (5, 4, 2),
        4: (4, 2, 0),
        5: (2, 0, 3),
        6: (0, 4, 2),
    }


def test_brokers_without_racks_keep_the_rack_unaware_placement() -> None:
    racks = {0: None, 1: None, 2: None}
    assert assign_replicas([0, 1, 2], 4, 2, start_index=1, racks=racks) == assign_replicas(
        [0, 1, 2], 4, 2, start_index=1
    )


def test_a_mix_of_brokers_with_and_without_racks_is_refused() -> None:
    with pytest.raises(InvalidReplicaAssignmentError, match=r"\[2\] have none"):
        assign_replicas([0, 1, 2], 3, 2, racks={0: "a", 1: "b", 2: None})


def test_added_partitions_are_rack_aware_too() -> None:
    existing = assign_replicas(RACKS, 3, 3, start_index=0, racks=RACKS)
    added = assign_added_partitions(RACKS, existing, 6, racks=RACKS)
    assert sorted(added) == [3, 4, 5]
    for replicas in added.values():
        assert len({RACKS[b] for b in replicas}) == 3


@settings(max_examples=150, deadline=None)
@given(
    racks=st.dictionaries(st.integers(0, 30), st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=9),
    partitions=st.integers(1, 30),
    data=st.data(),
)
def test_each_partition_spans_as_many_racks_as_it_can(racks, partitions, data) -> None:
    rf = data.draw(st.integers(1, len(racks)))
    start = data.draw(st.integers(0, len(racks) - 1))
    assignment = assign_replicas(racks, partitions, rf, start_index=start, racks=racks)
    rack_count = len(set(racks.values()))
    for replicas in assignment.values():
        assert len(replicas) == rf and len(set(replicas)) == rf
        assert len({racks[b] for b in replicas}) == min(rf, rack_count)
    leaders = Counter(replicas[0] for replicas in assignment.values())
    counts = [leaders.get(broker, 0) for broker in racks]
    assert max(counts) - min(counts) <= 1
