"""Owned partitions of a coordinator's topic: each status has Kafka's answer for the keys on it."""

from __future__ import annotations

from broker_core.coordinator.partition_ownership import Election, OwnedPartitions, PartitionStatus
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


def test_an_election_loads_once_and_a_repeat_at_the_same_epoch_changes_nothing() -> None:
    owned = OwnedPartitions(2)
    assert owned.elect(0, 3, reload_owned=True) is Election.LOAD
    assert owned.status(0) is PartitionStatus.LOADING and owned.epoch(0) == 3
    assert owned.elect(0, 3, reload_owned=True) is Election.KEPT
    owned.set_status(0, PartitionStatus.LOADED)
    assert owned.elect(0, 3, reload_owned=True) is Election.KEPT
    assert owned.status(0) is PartitionStatus.LOADED


def test_an_older_election_is_stale_and_changes_nothing() -> None:
    owned = OwnedPartitions(2)
    owned.elect(0, 5, reload_owned=False)
    owned.set_status(0, PartitionStatus.LOADED)
    assert owned.elect(0, 4, reload_owned=False) is Election.STALE
    assert (owned.status(0), owned.epoch(0)) == (PartitionStatus.LOADED, 5)


def test_a_newer_epoch_of_an_owned_partition_reloads_only_when_asked() -> None:
    owned = OwnedPartitions(2)
    for partition in (0, 1):
        owned.elect(partition, 1, reload_owned=False)
        owned.set_status(partition, PartitionStatus.LOADED)
    assert owned.elect(0, 2, reload_owned=False) is Election.KEPT
    assert (owned.status(0), owned.epoch(0)) == (PartitionStatus.LOADED, 2)
    assert owned.elect(1, 2, reload_owned=True) is Election.LOAD
    assert owned.status(1) is PartitionStatus.LOADING


def test_a_load_is_wanted_only_at_the_epoch_it_was_asked_for() -> None:
    owned = OwnedPartitions(1)
    owned.elect(0, 1, reload_owned=True)
    owned.elect(0, 2, reload_owned=True)
    assert not owned.is_loading_at(0, 1)
    assert owned.is_loading_at(0, 2)
    owned.resign(0, 3)
    assert not owned.is_loading_at(0, 2)


def test_resigning_forgets_the_partition_but_remembers_its_epoch() -> None:
    owned = OwnedPartitions(1)
    owned.elect(0, 4, reload_owned=False)
    owned.set_status(0, PartitionStatus.LOADED)
    assert owned.resign(0, 5)
    assert owned.status(0) is None and owned.epoch(0) == 5
    # The election that was overtaken by the resignation arrives late: it is stale.
    assert owned.elect(0, 4, reload_owned=False) is Election.STALE
    assert owned.elect(0, 6, reload_owned=False) is Election.LOAD


def test_a_resignation_older_than_the_current_election_is_stale() -> None:
    owned = OwnedPartitions(1)
    owned.elect(0, 7, reload_owned=False)
    assert not owned.resign(0, 6)
    assert owned.status(0) is PartitionStatus.LOADING
    # Without an epoch (the replica was stopped) a resignation always applies.
    assert owned.resign(0, None)
    assert owned.status(0) is None and owned.epoch(0) == 7


def test_a_newer_election_while_loading_asks_for_the_load_again_at_its_epoch() -> None:
    owned = OwnedPartitions(1)
    owned.elect(0, 1, reload_owned=False)
    assert owned.elect(0, 2, reload_owned=False) is Election.LOAD
    assert owned.is_loading_at(0, 2) and not owned.is_loading_at(0, 1)
