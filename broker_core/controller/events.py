"""What the controller reacts to: one event type per cause, handled one at a time on its thread."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

from spate.structs import TopicPartition


class ControllerEvent:
    """Base of every event; events carry only what the watch or caller knew when it fired."""


@dataclass(frozen=True)
class Startup(ControllerEvent):
    """This broker was just elected: load the cluster from ZooKeeper and take charge."""


@dataclass(frozen=True)
class BrokerChange(ControllerEvent):
    """``/brokers/ids`` changed: brokers registered or went away."""


@dataclass(frozen=True)
class TopicChange(ControllerEvent):
    """``/brokers/topics`` changed: topics created (or removed by the deletion's end)."""


@dataclass(frozen=True)
class PartitionModifications(ControllerEvent):
    """A topic's assignment znode changed: partitions added."""

    topic: str


@dataclass(frozen=True)
class TopicDeletion(ControllerEvent):
    """``/admin/delete_topics`` changed."""


@dataclass(frozen=True)
class IsrChangeNotification(ControllerEvent):
    """Leaders changed ISRs and left notifications."""


@dataclass(frozen=True)
class PartitionReassignment(ControllerEvent):
    """``/admin/reassign_partitions`` was written."""


@dataclass(frozen=True)
class PreferredReplicaElection(ControllerEvent):
    """``/admin/preferred_replica_election`` was written."""


@dataclass(frozen=True)
class ControlledShutdown(ControllerEvent):
    broker_id: int
    broker_epoch: int
    result: Future = field(compare=False)


@dataclass(frozen=True)
class StopReplicaResponse(ControllerEvent):
    broker_id: int
    errors: dict[TopicPartition, int] = field(compare=False)


@dataclass(frozen=True)
class LeaderAndIsrResponse(ControllerEvent):
    broker_id: int
    errors: dict[TopicPartition, int] = field(compare=False)


@dataclass(frozen=True)
class LogDirEventNotification(ControllerEvent):
    """Brokers left notifications that a log dir of theirs failed."""


@dataclass(frozen=True)
class AutoLeaderRebalance(ControllerEvent):
    """Time to move leadership back to preferred replicas where brokers lead too little."""
