"""Admin requests left in ZooKeeper for the controller to carry out.

* ``/admin/delete_topics/<t>``: no data; "delete this topic".
* ``/admin/reassign_partitions``: move replicas (the pre-2.4 way)::

      {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}

* ``/admin/preferred_replica_election``: lead with the first replica again::

      {"version":1,"partitions":[{"topic":"t","partition":0}]}

The controller deletes each request znode once it has acted on it.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes.fields import JsonFields, encode_json
from spate.structs import TopicPartition

ADMIN_REQUEST_VERSION = 1


class DeleteTopicsZNode:
    """``/admin/delete_topics``: its children are the topics waiting to be deleted."""

    @staticmethod
    def path() -> str:
        return "/admin/delete_topics"


class DeleteTopicZNode:
    """``/admin/delete_topics/<t>``: a request to delete one topic (no data)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode.path()}/{topic}"

    @staticmethod
    def encode() -> bytes:
        return b""


class ReassignPartitionsZNode:
    """``/admin/reassign_partitions``: the new replica lists of some partitions."""

    @staticmethod
    def path() -> str:
        return "/admin/reassign_partitions"

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
        partitions = [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(reassignment[tp])}
            for tp in sorted(reassignment)
        ]
        return encode_json({"version": ADMIN_REQUEST_VERSION, "partitions": partitions})

    @staticmethod
    def decode(data: bytes | None) -> dict[TopicPartition, tuple[int, ...]]:
        fields = JsonFields.parse(ReassignPartitionsZNode.path(), data)
        fields.version()
        result: dict[TopicPartition, tuple[int, ...]] = {}
        for entry in fields.children("partitions"):
            tp = decode_topic_partition(entry)
            if tp in result:
                raise ZNodeDecodeError(fields.path, f"names partition {tp} twice")
            result[tp] = entry.integers("replicas")
        return result


class PreferredReplicaElectionZNode:
    """``/admin/preferred_replica_election``: partitions to hand back to their preferred leader."""

    @staticmethod
    def path() -> str:
        return "/admin/preferred_replica_election"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return encode_json({"version": ADMIN_REQUEST_VERSION, "partitions": encode_topic_partitions(partitions)})

    @staticmethod
    def decode(data: bytes | None) -> frozenset[TopicPartition]:
        fields = JsonFields.parse(PreferredReplicaElectionZNode.path(), data)
        fields.version()
        return frozenset(decode_topic_partition(entry) for entry in fields.children("partitions"))


def encode_topic_partitions(partitions: Iterable[TopicPartition]) -> list[dict[str, object]]:
    """``[{"topic":..,"partition":..}]`` in topic, partition order."""
    return [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(set(partitions))]


def decode_topic_partition(entry: JsonFields) -> TopicPartition:
    return TopicPartition(entry.text("topic"), entry.integer("partition", minimum=0))
