"""Partition and replica states as the controller sees them, with their legal transitions.

Kafka's controller drives two state machines; these tables are their rules
(Kafka's ``validPreviousStates``). Moving an object to a state it cannot
reach from where it is raises :class:`IllegalStateTransitionError` instead of
slipping through: the controller's bookkeeping is the cluster's truth.

Partition states:

* NEW: assigned replicas exist, no leader has been elected yet;
* ONLINE: a leader is elected and its broker is alive;
* OFFLINE: it had a leader, whose broker died (or it never got one);
* NON_EXISTENT: never created, or deleted.

Replica states:

* NEW: created with its partition or a reassignment; may only become a follower;
* ONLINE: started on its broker, as leader or follower;
* OFFLINE: its broker died, or it was stopped for deletion;
* DELETION_STARTED / DELETION_SUCCESSFUL / DELETION_INELIGIBLE: topic deletion
  in progress, done, or blocked because the broker is down;
* NON_EXISTENT: gone.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class PartitionState(enum.Enum):
    NEW = "NewPartition"
    ONLINE = "OnlinePartition"
    OFFLINE = "OfflinePartition"
    NON_EXISTENT = "NonExistentPartition"


class ReplicaState(enum.Enum):
    NEW = "NewReplica"
    ONLINE = "OnlineReplica"
    OFFLINE = "OfflineReplica"
    DELETION_STARTED = "ReplicaDeletionStarted"
    DELETION_SUCCESSFUL = "ReplicaDeletionSuccessful"
    DELETION_INELIGIBLE = "ReplicaDeletionIneligible"
    NON_EXISTENT = "NonExistentReplica"


P, R = PartitionState, ReplicaState

PARTITION_VALID_PREVIOUS_STATES: Mapping[PartitionState, frozenset[PartitionState]] = {
    P.NEW: frozenset({P.NON_EXISTENT}),
    P.ONLINE: frozenset({P.NEW, P.ONLINE, P.OFFLINE}),
    P.OFFLINE: frozenset({P.NEW, P.ONLINE, P.OFFLINE}),
    P.NON_EXISTENT: frozenset({P.OFFLINE}),
}

REPLICA_VALID_PREVIOUS_STATES: Mapping[ReplicaState, frozenset[ReplicaState]] = {
    R.NEW: frozenset({R.NON_EXISTENT}),
    R.ONLINE: frozenset({R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE}),
    R.OFFLINE: frozenset({R.NEW, R.ONLINE, R.OFFLINE, R.DELETION_INELIGIBLE}),
    R.DELETION_STARTED: frozenset({R.OFFLINE}),
    R.DELETION_SUCCESSFUL: frozenset({R.DELETION_STARTED}),
    R.DELETION_INELIGIBLE: frozenset({R.OFFLINE, R.DELETION_STARTED}),
    R.NON_EXISTENT: frozenset({R.DELETION_SUCCESSFUL}),
}


class IllegalStateTransitionError(Exception):
    """The controller tried a transition its state tables forbid: a bug, never an input error."""


def check_partition_transition(what: str, current: PartitionState, target: PartitionState) -> None:
    if current not in PARTITION_VALID_PREVIOUS_STATES[target]:
        raise IllegalStateTransitionError(f"partition {what}: {current.value} cannot become {target.value}")


def check_replica_transition(what: str, current: ReplicaState, target: ReplicaState) -> None:
    if current not in REPLICA_VALID_PREVIOUS_STATES[target]:
        raise IllegalStateTransitionError(f"replica {what}: {current.value} cannot become {target.value}")
