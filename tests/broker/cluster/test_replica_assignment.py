"""Replica placement: Kafka's round-robin with start offset and shifting followers."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.cluster.assignment import (
    assign_added_partitions,
    assign_replicas,
    validate_assignment,
)
from broker_core.cluster.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)

ASSIGNMENT_TABLE = [
    pytest.param(
        [0, 1, 2, 3, 4],
        10,
        3,
        0,
        {
            0: (0, 1, 2), 1: (1, 2, 3), 2: (2, 3, 4), 3: (3, 4, 0), 4: (4, 0, 1),
            5: (0, 2, 3), 6: (1, 3, 4), 7: (2, 4, 0), 8: (3, 0, 1), 9: (4, 1, 2),
        },
        id="five-brokers-ten-partitions-rf3",
    ),
    pytest.param([0], 3, 1, 0, {0: (0,), 1: (0,), 2: (0,)}, id="single-broker"),
    pytest.param([0, 1, 2], 3, 1, 1, {0: (1,), 1: (2,), 2: (0,)}, id="start-offset-rotates-leaders"),
    pytest.param([0, 1, 2], 4, 2, 0, {0: (0, 1), 1: (1, 2), 2: (2, 0), 3: (0, 2)}, id="shift-after-wrap"),
    pytest.param([7, 3, 5], 3, 3, 0, {0: (3, 5, 7), 1: (5, 7, 3), 2: (7, 3, 5)}, id="brokers-are-sorted"),
    pytest.param([0, 1, 2, 2], 2, 2, 0, {0: (0, 1), 1: (1, 2)}, id="duplicate-broker-ids-count-once"),
]


@pytest.mark.parametrize("brokers, partitions, rf, start, expected", ASSIGNMENT_TABLE)
def test_assignment_table(brokers: list[int], partitions: int, rf: int, start: int, expected: dict) -> None:
    assert assign_replicas(brokers, partitions, rf, start_index=start) == expected


ERRORS = [
    ([0, 1], 0, 1, InvalidPartitionsError, "larger than 0"),
    ([0, 1], 3, 0, InvalidReplicationFactorError, "larger than 0"),
    ([0, 1], 3, 3, InvalidReplicationFactorError, "replication factor 3 is larger than the 2 available"),
    ([], 1, 1, InvalidReplicationFactorError, "no brokers"),
]


@pytest.mark.parametrize("brokers, partitions, rf, error, message", ERRORS)
def test_impossible_requests_raise_typed_errors(brokers, partitions, rf, error, message) -> None:
    with pytest.raises(error, match=message):
        assign_replicas(brokers, partitions, rf)


def test_random_start_comes_from_the_injected_rng() -> None:
    first = assign_replicas(range(5), 5, 2, rng=random.Random(42))
    again = assign_replicas(range(5), 5, 2, rng=random.Random(42))
    assert first == again
    leaders = {replicas[0] for replicas in first.values()}
    assert leaders == set(range(5))


def test_added_partitions_continue_the_existing_pattern() -> None:
    existing = assign_replicas([0, 1, 2], 3, 2, start_index=1)
    added = assign_added_partitions([0, 1, 2], existing, 6)
    assert sorted(added) == [3, 4, 5]
    combined = {**existing, **added}
    assert combined == assign_replicas([0, 1, 2], 6, 2, start_index=1)


def test_added_partitions_require_a_larger_count() -> None:
    existing = {0: (0,), 1: (0,)}
    with pytest.raises(InvalidPartitionsError, match="must be larger"):
        assign_added_partitions([0], existing, 2)


@settings(max_examples=150, deadline=None)
@given(
    brokers=st.sets(st.integers(0, 50), min_size=1, max_size=8),
    partitions=st.integers(1, 40),
    data=st.data(),
)
def test_every_partition_gets_rf_distinct_live_replicas_and_leaders_spread(brokers, partitions, data) -> None:
    rf = data.draw(st.integers(1, len(brokers)))
    start = data.draw(st.integers(0, len(brokers) - 1))
    assignment = assign_replicas(brokers, partitions, rf, start_index=start)
    assert sorted(assignment) == list(range(partitions))
    for replicas in assignment.values():
        assert len(replicas) == rf
        assert len(set(replicas)) == rf
        assert set(replicas) <= brokers
    leaders = Counter(replicas[0] for replicas in assignment.values())
    counts = [leaders.get(broker, 0) for broker in brokers]
    assert max(counts) - min(counts) <= 1


MANUAL_ERRORS = [
    ({}, {}, InvalidPartitionsError, "at least one partition"),
    ({0: [0], 2: [1]}, {}, InvalidReplicaAssignmentError, "without gaps"),
    ({0: []}, {}, InvalidReplicaAssignmentError, "no replicas"),
    ({0: [1, 1]}, {}, InvalidReplicaAssignmentError, "lists a broker twice"),
    ({0: [0, 1], 1: [1]}, {}, InvalidReplicaAssignmentError, "same number of replicas"),
    ({0: [0, 9]}, {"live_brokers": [0, 1]}, InvalidReplicaAssignmentError, r"unknown broker\(s\) \[9\]"),
    ({0: [0]}, {"replication_factor": 2}, InvalidReplicaAssignmentError, "replication factor is 2"),
    ({0: [0]}, {"first_partition": 3}, InvalidReplicaAssignmentError, "must be 3..3"),
]


@pytest.mark.parametrize("assignment, kwargs, error, message", MANUAL_ERRORS)
def test_manual_assignments_are_checked(assignment, kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        validate_assignment(assignment, **kwargs)


def test_valid_manual_assignment_passes() -> None:
    validate_assignment({3: [0, 1], 4: [1, 0]}, first_partition=3, replication_factor=2, live_brokers=[0, 1])
