"""Topics: ``/brokers/topics/<t>`` (assignment) and ``.../partitions/<p>/state`` (leadership).

The topic znode holds the topic id and the replicas of every partition
(Kafka's version 3)::

    {"removing_replicas":{},"partitions":{"0":[1,2],"1":[2,1]},
     "topic_id":"<22-char base64>","adding_replicas":{},"version":3}

``adding_replicas`` / ``removing_replicas`` list the replicas an ongoing
reassignment adds or removes, per partition; partitions without one are
left out. Kafka writes the keys in this order (and the partitions in hash
order; Spate writes them in partition order).

The state znode holds the partition's leader, leader epoch, ISR and the epoch
of the controller that wrote it (Kafka's ``LeaderIsrAndControllerEpoch``)::

    {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}

Its ZooKeeper data version is the partition state version: every writer sets
it conditionally on the version it read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes.fields import JsonFields, encode_json, encode_uuid

TOPIC_ASSIGNMENT_VERSION = 3
PARTITION_STATE_VERSION = 1
# LeaderRecoveryState.RECOVERED; Kafka writes the field only for other states.
RECOVERED = 0


@dataclass(frozen=True)
class TopicAssignment:
    """What a topic znode holds: its id and its replicas per partition."""

    topic_id: uuid.UUID | None
    partitions: Mapping[int, tuple[int, ...]]
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    """What a partition state znode holds."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    leader_recovery_state: int = RECOVERED


class TopicsZNode:
    """``/brokers/topics``: its children are the topic names."""

    @staticmethod
    def path() -> str:
        return "/brokers/topics"


class TopicZNode:
    """``/brokers/topics/<t>``: the topic's id and replica assignment."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode.path()}/{topic}"

    @staticmethod
    def encode(assignment: TopicAssignment) -> bytes:
        document: dict[str, Any] = {
            "removing_replicas": _replica_map(assignment.removing_replicas),
            "partitions": _replica_map(assignment.partitions),
        }
        if assignment.topic_id is not None:
            document["topic_id"] = encode_uuid(assignment.topic_id)
        document["adding_replicas"] = _replica_map(assignment.adding_replicas)
        document["version"] = TOPIC_ASSIGNMENT_VERSION
        return encode_json(document)

    @staticmethod
    def decode(topic: str, data: bytes | None) -> TopicAssignment:
        fields = JsonFields.parse(TopicZNode.path(topic), data)
        fields.version()
        return TopicAssignment(
            topic_id=fields.kafka_uuid("topic_id") if fields.has("topic_id") else None,
            partitions=_decode_replica_map(fields, "partitions"),
            adding_replicas=_decode_replica_map(fields, "adding_replicas") if fields.has("adding_replicas") else {},
            removing_replicas=(
                _decode_replica_map(fields, "removing_replicas") if fields.has("removing_replicas") else {}
            ),
        )


class TopicPartitionsZNode:
    """``/brokers/topics/<t>/partitions``: no data; its children are the partition ids."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    """``/brokers/topics/<t>/partitions/<p>``: no data; the parent of the state znode."""

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{TopicPartitionsZNode.path(topic)}/{partition}"


class TopicPartitionStateZNode:
    """``/brokers/topics/<t>/partitions/<p>/state``: leader, leader epoch, ISR, controller epoch."""

    @staticmethod
    def path(topic: str, partition: int) -> str:
        return f"{TopicPartitionZNode.path(topic, partition)}/state"

    @staticmethod
    def encode(state: LeaderIsrAndControllerEpoch) -> bytes:
        document: dict[str, Any] = {
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": PARTITION_STATE_VERSION,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
        if state.leader_recovery_state != RECOVERED:
            document["leader_recovery_state"] = state.leader_recovery_state
        return encode_json(document)

    @staticmethod
    def decode(topic: str, partition: int, data: bytes | None) -> LeaderIsrAndControllerEpoch:
        fields = JsonFields.parse(TopicPartitionStateZNode.path(topic, partition), data)
        fields.version()
        return LeaderIsrAndControllerEpoch(
            leader=fields.integer("leader"),
            leader_epoch=fields.integer("leader_epoch"),
            isr=fields.integers("isr"),
            controller_epoch=fields.integer("controller_epoch"),
            leader_recovery_state=(
                fields.integer("leader_recovery_state", minimum=0, maximum=127)
                if fields.has("leader_recovery_state")
                else RECOVERED
            ),
        )


def _replica_map(replicas: Mapping[int, tuple[int, ...]]) -> dict[str, list[int]]:
    return {str(partition): list(replicas[partition]) for partition in sorted(replicas)}


def _decode_replica_map(fields: JsonFields, key: str) -> dict[int, tuple[int, ...]]:
    child = fields.child(key)
    result: dict[int, tuple[int, ...]] = {}
    for name in child.keys():
        if not name.isdigit() or (len(name) > 1 and name.startswith("0")):
            raise ZNodeDecodeError(fields.path, f"field {key!r} has partition {name!r}, not a partition id")
        result[int(name)] = child.integers(name)
    return dict(sorted(result.items()))
