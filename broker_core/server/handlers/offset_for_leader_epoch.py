"""OffsetForLeaderEpoch: where a leader epoch ended, for truncation after a leader change.

Only the leader answers, and only a request that knows its leader epoch (or
names none): an older one is FENCED_LEADER_EPOCH, a newer one
UNKNOWN_LEADER_EPOCH (KIP-320), checked before leadership as Kafka does.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochResponse

R = OffsetForLeaderEpochResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    refused = _refused(ctx, request)
    topics = [
        R.OffsetForLeaderTopicResult(
            topic=topic.topic, partitions=[
                _end_offset(ctx, topic.topic, p) if topic.topic not in refused else
                R.EpochEndOffset(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition=p.partition)
                for p in topic.partitions]
        )
        for topic in request.body.topics
    ]
    return R(throttle_time_ms=0, topics=topics)


def _refused(ctx: BrokerContext, request: Request) -> frozenset[str]:
    """A follower needs ClusterAction on the cluster, a consumer Describe on each topic."""
    names = [topic.topic for topic in request.body.topics]
    if acl_checks.enabled(ctx) and request.body.replica_id >= 0:
        return frozenset() if acl_checks.cluster(ctx, request, acl_checks.Op.CLUSTER_ACTION) else frozenset(names)
    return acl_checks.refused_topics(ctx, request, acl_checks.Op.DESCRIBE, names)


def _end_offset(ctx: BrokerContext, topic: str, wanted: Any) -> Any:
    index = wanted.partition
    try:
        partition = leader_partition(ctx, topic, index, wanted.current_leader_epoch)
        epoch, end_offset = partition.end_offset_for_epoch(wanted.leader_epoch)
    except Exception as exc:
        return R.EpochEndOffset(error_code=error_code_for(exc, where="offset_for_leader_epoch"), partition=index)
    return R.EpochEndOffset(error_code=ErrorCode.NONE, partition=index, leader_epoch=epoch, end_offset=end_offset)
