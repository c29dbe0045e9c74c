"""What a replica fetcher knows of each partition it replicates (Kafka's ``PartitionFetchState``).

A partition enters a fetcher **truncating**: it must first find where its
log agrees with the leader's (``truncation``). It then **fetches** from its
log end. The only way back is a new state: a LeaderAndIsr naming a new
leader epoch replaces the partition's state with a fresh truncating one.
An error delays the partition (``delayed_until``, on the event loop's
clock) without changing its phase.

=============  ====================================  =============
from           event                                 to
=============  ====================================  =============
TRUNCATING     truncation completed                  FETCHING
TRUNCATING     truncated part-way (ask again)        TRUNCATING
FETCHING       fetched, or offset out of range       FETCHING
=============  ====================================  =============
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from broker_core.replication.leader_endpoint import BrokerEndpoint


class FetchPhase(enum.Enum):
    TRUNCATING = "truncating"
    FETCHING = "fetching"


class IllegalFetchStateTransition(Exception):
    """A partition's fetch state was asked to move in a way the table does not allow."""


_TRANSITIONS = {
    (FetchPhase.TRUNCATING, FetchPhase.FETCHING),
    (FetchPhase.TRUNCATING, FetchPhase.TRUNCATING),
    (FetchPhase.FETCHING, FetchPhase.FETCHING),
}


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    """How a partition starts in a fetcher: its leader, the leader epoch it follows, where to start."""

    leader: BrokerEndpoint
    current_leader_epoch: int
    init_offset: int


@dataclass(slots=True, eq=False)
class PartitionFetchState:
    """One partition in one fetcher; compared by identity, so a replaced state is told apart from its successor."""

    fetch_offset: int
    current_leader_epoch: int
    phase: FetchPhase = FetchPhase.TRUNCATING
    delayed_until: float = 0.0

    def ready(self, now: float) -> bool:
        return now >= self.delayed_until

    def move_to(self, phase: FetchPhase, fetch_offset: int) -> None:
        if (self.phase, phase) not in _TRANSITIONS:
            raise IllegalFetchStateTransition(f"{self.phase.value} -> {phase.value}")
        self.phase = phase
        self.fetch_offset = fetch_offset
