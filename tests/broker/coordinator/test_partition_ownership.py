"""Owned partitions of a coordinator's topic: each status has Kafka's answer for the keys on it."""

from __future__ import annotations

from broker_core.coordinator.partition_ownership import OwnedPartitions, PartitionStatus
from broker_core.coordinator.partitioning import partition_for
from spate.protocol.errors import ErrorCode

E = ErrorCode


def test_the_answer_for_a_key_follows_the_status_of_its_partition() -> None:
    owned = OwnedPartitions(4)
    partition = partition_for("g", 4)
    assert owned.partition_for("g") == partition
    assert owned.coordinator_error("g") is E.NOT_COORDINATOR
    for status, answer in [
        (PartitionStatus.LOADING, E.COORDINATOR_LOAD_IN_PROGRESS),
        (PartitionStatus.FAILED, E.COORDINATOR_NOT_AVAILABLE),
        (PartitionStatus.LOADED, E.NONE),
    ]:
        owned.set_status(partition, status)
        assert owned.status(partition) is status
        assert owned.coordinator_error("g") is answer


def test_loading_while_any_partition_loads() -> None:
    owned = OwnedPartitions(2)
    owned.set_status(0, PartitionStatus.LOADED)
    assert not owned.is_loading
    owned.set_status(1, PartitionStatus.LOADING)
    assert owned.is_loading
