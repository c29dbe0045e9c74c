"""Finding the local leader of a requested partition, or the error to answer with."""

from __future__ import annotations

from broker_core.cluster.errors import UnknownTopicError
from broker_core.replication.partition import Partition
from broker_core.server.context import BrokerContext
from spate.protocol.errors import ErrorCode, KafkaError


def leader_partition(ctx: BrokerContext, topic: str, index: int) -> Partition:
    """The partition if this broker leads it; otherwise a KafkaError with Kafka's code.

    NOT_LEADER_OR_FOLLOWER when the cluster knows the partition (the client
    refreshes its metadata and goes to the leader), UNKNOWN_TOPIC_OR_PARTITION
    when it does not.
    """
    partition = ctx.replicas.get(topic, index)
    if partition is not None:
        return partition
    try:
        description = ctx.metadata.get_topic(topic)
    except UnknownTopicError:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {topic!r}") from None
    if index not in description.partitions:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic!r} has no partition {index}")
    raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{topic}-{index} is not led by broker {ctx.node_id}")


def check_leader_epoch(partition: Partition, current_leader_epoch: int) -> None:
    """Fence requests from clients that know a different leader epoch (-1: not checked)."""
    if current_leader_epoch < 0 or current_leader_epoch == partition.leader_epoch:
        return
    if current_leader_epoch < partition.leader_epoch:
        raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH, f"leader epoch {current_leader_epoch} is stale")
    raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH, f"leader epoch {current_leader_epoch} is not known yet")
