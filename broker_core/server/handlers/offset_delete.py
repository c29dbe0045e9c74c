"""OffsetDelete: drops a group's offsets for partitions of topics it is not consuming."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.requested_partitions import answer_each_partition, known_partitions
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_delete import OffsetDeleteResponse
from spate.structs import TopicPartition

R = OffsetDeleteResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.group(ctx, request, acl_checks.Op.DELETE, body.group_id):
        return R(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[])
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.READ, (t.name for t in body.topics))
    known, errors = known_partitions(ctx, [t for t in body.topics if t.name not in refused])
    errors.update({TopicPartition(t.name, p.partition_index): ErrorCode.TOPIC_AUTHORIZATION_FAILED
                   for t in body.topics if t.name in refused for p in t.partitions})
    result = ctx.group_coordinator.delete_offsets(group_id=body.group_id, partitions=[tp for tp, _ in known])
    if result.error != ErrorCode.NONE:
        return R(error_code=result.error, throttle_time_ms=0, topics=[])
    errors.update(result.partitions)
    return R(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=answer_each_partition(
            body.topics, R.OffsetDeleteResponseTopic, R.OffsetDeleteResponsePartition, lambda tp: errors[tp]
        ),
    )
