"""What the active controller knows of the cluster (Kafka's ControllerContext).

Loaded whole from ZooKeeper when a broker becomes controller and kept up to
date by the controller's own writes and by ZooKeeper watches. Only the
controller's event thread reads or changes it, so it needs no lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.controller.states import PartitionState, ReplicaState
from spate.structs import TopicPartition

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """A partition's leadership as written in its state znode, with that znode's data version."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    zk_version: int

    def elect(self, leader: int, isr: tuple[int, ...], controller_epoch: int) -> LeaderAndIsr:
        """The next state: a new leader (or the same one) always takes the next leader epoch."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, isr, controller_epoch, self.zk_version)


@dataclass(frozen=True, slots=True)
class PartitionReplica:
    """One replica: a partition on a broker."""

    partition: TopicPartition
    broker_id: int


@dataclass
class ControllerContext:
    epoch: int = 0
    # Every endpoint each live broker advertises; host and port are its inter-broker listener's.
    live_brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    # Each live broker's epoch: the czxid of its registration znode, new with every registration.
    broker_epochs: dict[int, int] = field(default_factory=dict)
    shutting_down: set[int] = field(default_factory=set)
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    assignments: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    leadership: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    partition_states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    replica_states: dict[PartitionReplica, ReplicaState] = field(default_factory=dict)
    # Replicas whose broker is alive but whose log dir failed (answered KAFKA_STORAGE_ERROR), per broker.
    replicas_on_offline_dirs: dict[int, set[TopicPartition]] = field(default_factory=dict)
    # target replicas of reassignments in progress
    reassignments: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    topics_to_delete: set[str] = field(default_factory=set)

    # --- brokers -------------------------------------------------------------------------

    @property
    def live_broker_ids(self) -> set[int]:
        return set(self.live_brokers)

    def live_or_shutting_down(self) -> set[int]:
        """Brokers that answer requests: alive, including those moving their leadership away."""
        return set(self.live_brokers)

    def electable_brokers(self) -> set[int]:
        """Brokers that may take new leadership: alive and not shutting down."""
        return set(self.live_brokers) - self.shutting_down

    def is_replica_online(self, broker_id: int, partition: TopicPartition | None = None) -> bool:
        """Its broker is alive and, for a given ``partition``, the replica's log dir has not failed."""
        if broker_id not in self.live_brokers:
            return False
        return partition is None or partition not in self.replicas_on_offline_dirs.get(broker_id, ())

    def offline_dir_replicas(self, partition: TopicPartition) -> set[int]:
        """Live brokers whose replica of ``partition`` is on a failed log dir."""
        return {b for b, partitions in self.replicas_on_offline_dirs.items() if partition in partitions}

    # --- topics and partitions -----------------------------------------------------------

    @property
    def topics(self) -> set[str]:
        return set(self.topic_ids)

    def partitions_of(self, topic: str) -> list[TopicPartition]:
        return sorted(tp for tp in self.assignments if tp.topic == topic)

    def all_partitions(self) -> list[TopicPartition]:
        return sorted(self.assignments)

    def replicas_of(self, tp: TopicPartition) -> tuple[int, ...]:
        return self.assignments.get(tp, ())

    def replicas_on(self, broker_ids: Iterable[int]) -> list[PartitionReplica]:
        brokers = set(broker_ids)
        return [
            PartitionReplica(tp, broker)
            for tp, replicas in sorted(self.assignments.items())
            for broker in replicas
            if broker in brokers
        ]

    def replicas_for(self, partitions: Iterable[TopicPartition]) -> list[PartitionReplica]:
        return [PartitionReplica(tp, broker) for tp in partitions for broker in self.replicas_of(tp)]

    def partitions_led_by(self, broker_id: int) -> list[TopicPartition]:
        return sorted(tp for tp, state in self.leadership.items() if state.leader == broker_id)

    def partitions_in_state(self, *states: PartitionState) -> list[TopicPartition]:
        return sorted(tp for tp, state in self.partition_states.items() if state in states)

    def add_topic(self, topic: str, topic_id: uuid.UUID, assignment: dict[int, tuple[int, ...]]) -> None:
        self.topic_ids[topic] = topic_id
        for partition, replicas in assignment.items():
            self.assignments[TopicPartition(topic, partition)] = tuple(replicas)

    def remove_topic(self, topic: str) -> None:
        self.topic_ids.pop(topic, None)
        self.topics_to_delete.discard(topic)
        for tp in self.partitions_of(topic):
            self.assignments.pop(tp, None)
            self.leadership.pop(tp, None)
            self.partition_states.pop(tp, None)
            self.reassignments.pop(tp, None)
        for replica in [r for r in self.replica_states if r.partition.topic == topic]:
            del self.replica_states[replica]

    def is_deleting(self, topic: str) -> bool:
        return topic in self.topics_to_delete

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.partition_states.get(tp, PartitionState.NON_EXISTENT)

    def replica_state(self, replica: PartitionReplica) -> ReplicaState:
        return self.replica_states.get(replica, ReplicaState.NON_EXISTENT)

    def offline_partitions(self) -> Iterator[TopicPartition]:
        for tp, state in sorted(self.partition_states.items()):
            if state is PartitionState.OFFLINE and not self.is_deleting(tp.topic):
                yield tp
