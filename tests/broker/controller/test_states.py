"""The state tables refuse transitions Kafka's controller never makes."""

from __future__ import annotations

import pytest

from broker_core.controller.states import (
    IllegalStateTransitionError,
    PartitionState,
    ReplicaState,
    check_partition_transition,
    check_replica_transition,
)


@pytest.mark.parametrize(("current", "target"), [
    (PartitionState.NON_EXISTENT, PartitionState.NEW),
    (PartitionState.NEW, PartitionState.ONLINE),
    (PartitionState.OFFLINE, PartitionState.ONLINE),
    (PartitionState.ONLINE, PartitionState.OFFLINE),
    (PartitionState.OFFLINE, PartitionState.NON_EXISTENT),
])
def test_partition_transitions_kafka_makes_are_allowed(current, target) -> None:
    check_partition_transition("t-0", current, target)


@pytest.mark.parametrize(("current", "target"), [
    (PartitionState.NON_EXISTENT, PartitionState.ONLINE),
    (PartitionState.ONLINE, PartitionState.NON_EXISTENT),
    (PartitionState.ONLINE, PartitionState.NEW),
])
def test_other_partition_transitions_raise(current, target) -> None:
    with pytest.raises(IllegalStateTransitionError, match="t-0"):
        check_partition_transition("t-0", current, target)


def test_a_replica_is_deleted_only_after_it_is_stopped() -> None:
    check_replica_transition("r", ReplicaState.OFFLINE, ReplicaState.DELETION_STARTED)
    with pytest.raises(IllegalStateTransitionError):
        check_replica_transition("r", ReplicaState.ONLINE, ReplicaState.DELETION_STARTED)
    with pytest.raises(IllegalStateTransitionError):
        check_replica_transition("r", ReplicaState.DELETION_STARTED, ReplicaState.NON_EXISTENT)
