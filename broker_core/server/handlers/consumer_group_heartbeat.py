"""ConsumerGroupHeartbeat: a consumer-group member (KIP-848) joins, reconciles, stays alive or leaves.

Topics travel as ids on the wire and as names inside the coordinator; owned
partitions of topics this broker no longer knows are dropped (the member
revokes them as the assignment no longer holds them).
"""

from __future__ import annotations

import uuid
from typing import Any, Mapping

from broker_core.coordinator.group.consumer_group.heartbeat_types import ConsumerHeartbeat, TopicsImage
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_id_of, topic_names_by_id
from spate.protocol.connection import Request
from spate.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatResponse

R = ConsumerGroupHeartbeatResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    owned = None
    if body.topic_partitions is not None:
        names = topic_names_by_id(ctx.metadata)
        owned = {names[tp.topic_id]: frozenset(tp.partitions) for tp in body.topic_partitions
                 if tp.topic_id in names}
    heartbeat = ConsumerHeartbeat(
        group_id=body.group_id,
        member_id=body.member_id,
        member_epoch=body.member_epoch,
        instance_id=body.instance_id,
        rack_id=body.rack_id,
        rebalance_timeout_ms=body.rebalance_timeout_ms,
        subscribed_topic_names=None if body.subscribed_topic_names is None else tuple(body.subscribed_topic_names),
        subscribed_topic_regex=body.subscribed_topic_regex,
        server_assignor=body.server_assignor,
        owned=owned,
        client_id=request.header.client_id or "",
        client_host=f"/{request.client_host}" if request.client_host else "",
    )
    topics = TopicsImage(names=ctx.metadata.topic_names, partition_count=ctx.metadata.partition_count)
    result = ctx.group_coordinator.consumer_group_heartbeat(heartbeat, topics)
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        error_message=result.message,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=None if result.assignment is None else R.Assignment(topic_partitions=_by_id(ctx, result.assignment)),
    )


def _by_id(ctx: BrokerContext, assignment: Mapping[str, frozenset[int]]) -> list[Any]:
    topics = []
    for name, partitions in sorted(assignment.items()):
        topic_id: uuid.UUID = topic_id_of(ctx.metadata, name)
        topics.append(R.TopicPartitions(topic_id=topic_id, partitions=sorted(partitions)))
    return topics
