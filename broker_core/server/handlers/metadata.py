"""Metadata: brokers, topics, partition leaders; auto-creates topics when allowed."""

from __future__ import annotations

from typing import Any

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.topic_names import is_internal_topic, is_valid_topic_name
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataResponse

R = MetadataResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    brokers = [
        R.MetadataResponseBroker(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in ctx.store.list_brokers()
    ]
    # v0 sends an empty list for "all topics"; v1+ sends null.
    if body.topics is None or (request.api_version == 0 and not body.topics):
        names = ctx.store.list_topics()
        allow_create = False
    else:
        names = [t.name for t in body.topics]
        allow_create = body.allow_auto_topic_creation
    topics = [_describe_topic(ctx, name, allow_create) for name in names]
    return R(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=ctx.store.cluster_id(),
        controller_id=ctx.node_id,
        topics=topics,
    )


def _describe_topic(ctx: BrokerContext, name: str, allow_create: bool) -> Any:
    if not is_valid_topic_name(name):
        return R.MetadataResponseTopic(error_code=ErrorCode.INVALID_TOPIC_EXCEPTION, name=name, partitions=[])
    try:
        topic = ctx.store.get_topic(name)
    except UnknownTopicError:
        # Leaders are local and ready at once, so a topic created here is
        # described in the same response instead of LEADER_NOT_AVAILABLE.
        topic = ctx.topics.auto_create(name) if allow_create else None
        if topic is None:
            return R.MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name, partitions=[])
    partitions = [
        R.MetadataResponsePartition(
            error_code=ErrorCode.NONE,
            partition_index=index,
            leader_id=state.leader,
            leader_epoch=state.leader_epoch,
            replica_nodes=list(state.replicas),
            isr_nodes=list(state.isr),
            offline_replicas=[],
        )
        for index, state in sorted(topic.partitions.items())
    ]
    return R.MetadataResponseTopic(
        error_code=ErrorCode.NONE, name=name, is_internal=is_internal_topic(name), partitions=partitions
    )
