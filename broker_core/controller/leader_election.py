"""Choosing a partition's leader: Kafka's four election rules, as pure functions.

Every rule walks the partition's replica assignment in order, so the first
replica (the *preferred* leader) wins whenever it may lead and leadership
spreads the way the assignment spread it. A replica may lead only when its
broker is alive; a clean election also requires it to be in the ISR, since
only an in-sync replica is known to hold every acknowledged record.

* offline: the partition has no live leader (new partition, broker failure);
  falls back to an out-of-sync replica only when unclean election is allowed,
  and says so, because that loses acknowledged records.
* reassignment: the leader must be one of the target replicas.
* preferred: only the first assigned replica, to move leadership back to it.
* controlled shutdown: any live in-sync replica but the brokers shutting down,
  which also leave the ISR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class Election:
    """The outcome of an election: the new leader (or NO_LEADER), the ISR to write, and whether it was unclean."""

    leader: int
    isr: tuple[int, ...]
    unclean: bool = False

    @property
    def elected(self) -> bool:
        return self.leader != NO_LEADER


def offline_partition_election(
    assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int], *, unclean_allowed: bool
) -> Election:
    """First live in-sync replica in assignment order; else, if allowed, the first live replica."""
    for replica in assignment:
        if replica in live and replica in isr:
            return Election(replica, tuple(r for r in isr if r in live))
    if unclean_allowed:
        for replica in assignment:
            if replica in live:
                # The new leader alone is known to hold what it holds: it is the whole ISR.
                return Election(replica, (replica,), unclean=True)
    return Election(NO_LEADER, tuple(r for r in isr if r in live))


def reassignment_election(target: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election:
    """First live in-sync replica of the reassignment's target replicas."""
    for replica in target:
        if replica in live and replica in isr:
            return Election(replica, tuple(isr))
    return Election(NO_LEADER, tuple(isr))


def preferred_replica_election(assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int]) -> Election:
    """The first assigned replica, if it is alive and in sync."""
    if assignment and assignment[0] in live and assignment[0] in isr:
        return Election(assignment[0], tuple(isr))
    return Election(NO_LEADER, tuple(isr))


def controlled_shutdown_election(
    assignment: Sequence[int], isr: Sequence[int], live: AbstractSet[int], shutting_down: AbstractSet[int]
) -> Election:
    """First live in-sync replica not shutting down; the brokers shutting down leave the ISR."""
    remaining = tuple(r for r in isr if r not in shutting_down)
    for replica in assignment:
        if replica in live and replica in remaining:
            return Election(replica, remaining)
    return Election(NO_LEADER, remaining)
