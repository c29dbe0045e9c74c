"""Kafka's election rules: the first eligible replica in assignment order wins."""

from __future__ import annotations

from broker_core.controller.leader_election import (
    NO_LEADER,
    controlled_shutdown_election,
    offline_partition_election,
    preferred_replica_election,
    reassignment_election,
)


def test_offline_election_takes_the_first_live_in_sync_replica_in_assignment_order() -> None:
    election = offline_partition_election((3, 1, 2), isr=(2, 1), live={1, 2}, unclean_allowed=False)
    assert (election.leader, election.isr, election.unclean) == (1, (2, 1), False)


def test_offline_election_drops_dead_brokers_from_the_isr() -> None:
    assert offline_partition_election((1, 2, 3), isr=(1, 2, 3), live={2, 3}, unclean_allowed=False).isr == (2, 3)


def test_offline_election_without_an_in_sync_replica_leaves_the_partition_leaderless() -> None:
    election = offline_partition_election((1, 2), isr=(1,), live={2}, unclean_allowed=False)
    assert election.leader == NO_LEADER and not election.elected


def test_unclean_election_picks_a_live_out_of_sync_replica_and_says_so() -> None:
    election = offline_partition_election((1, 2), isr=(1,), live={2}, unclean_allowed=True)
    assert (election.leader, election.isr, election.unclean) == (2, (2,), True)


def test_unclean_election_is_not_used_while_an_in_sync_replica_lives() -> None:
    assert not offline_partition_election((2, 1), isr=(1,), live={1, 2}, unclean_allowed=True).unclean


def test_reassignment_election_chooses_among_the_target_replicas() -> None:
    assert reassignment_election((4, 5), isr=(1, 5, 4), live={1, 4, 5}).leader == 4
    assert reassignment_election((4, 5), isr=(1,), live={1, 4, 5}).leader == NO_LEADER


def test_preferred_election_succeeds_only_for_a_live_in_sync_first_replica() -> None:
    assert preferred_replica_election((2, 1), isr=(1, 2), live={1, 2}).leader == 2
    assert preferred_replica_election((2, 1), isr=(1,), live={1, 2}).leader == NO_LEADER
    assert preferred_replica_election((2, 1), isr=(1, 2), live={1}).leader == NO_LEADER


def test_controlled_shutdown_election_skips_and_removes_the_brokers_shutting_down() -> None:
    election = controlled_shutdown_election((1, 2, 3), isr=(1, 2, 3), live={1, 2, 3}, shutting_down={1})
    assert (election.leader, election.isr) == (2, (2, 3))
