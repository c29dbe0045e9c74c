"""Finding the local leader of a requested partition, or the error to answer with.

Kafka's ``getPartitionOrError`` then ``localLogWithEpochOrThrow``: a partition
hosted here is first checked against the leader epoch the request names
(KIP-320), then for leadership; one not hosted here is unknown or led
elsewhere.
"""

from __future__ import annotations

from broker_core.cluster.errors import UnknownTopicError
from broker_core.replication.partition import Partition
from broker_core.server.context import BrokerContext
from spate.protocol.errors import ErrorCode, KafkaError

NO_LEADER_EPOCH = -1


def leader_partition(
    ctx: BrokerContext, topic: str, index: int, current_leader_epoch: int = NO_LEADER_EPOCH
) -> Partition:
    """The partition if this broker leads it at ``current_leader_epoch`` (-1: any); otherwise a KafkaError.

    FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when the request knows an
    older / newer leader epoch than this broker's; NOT_LEADER_OR_FOLLOWER
    when the partition is not led here (a follower, a deposed leader, or a
    partition the cluster knows elsewhere: the client refreshes its metadata
    and goes to the leader); KAFKA_STORAGE_ERROR when its log dir failed
    here; UNKNOWN_TOPIC_OR_PARTITION when nobody has it.
    """
    hosted = ctx.replicas.hosted(topic, index)
    if hosted is None:
        raise _not_hosted(ctx, topic, index)
    check_leader_epoch(hosted, current_leader_epoch)
    if not ctx.replicas.is_leader(topic, index) or not hosted.is_leader:
        raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{topic}-{index} is not led by broker {ctx.node_id}")
    return hosted


def _not_hosted(ctx: BrokerContext, topic: str, index: int) -> KafkaError:
    if ctx.replicas.is_offline(topic, index):
        return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"the log dir of {topic}-{index} failed on broker {ctx.node_id}")
    try:
        description = ctx.metadata.get_topic(topic)
    except UnknownTopicError:
        return KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {topic!r}")
    if index not in description.partitions:
        return KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic!r} has no partition {index}")
    return KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{topic}-{index} is not led by broker {ctx.node_id}")


def check_leader_epoch(partition: Partition, current_leader_epoch: int) -> None:
    """Fence requests from clients that know a different leader epoch (-1: not checked)."""
    if current_leader_epoch < 0 or current_leader_epoch == partition.leader_epoch:
        return
    if current_leader_epoch < partition.leader_epoch:
        raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH, f"leader epoch {current_leader_epoch} is stale")
    raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH, f"leader epoch {current_leader_epoch} is not known yet")
