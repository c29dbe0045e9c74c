"""AlterPartitionReassignments: start moving partitions to new replicas, or cancel (null replicas)."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsResponse
from spate.structs import TopicPartition, group_by_topic

R = AlterPartitionReassignmentsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.ALTER)
    if refusal is not None:
        return R(throttle_time_ms=0, error_code=refusal, responses=[])
    targets = {
        TopicPartition(topic.name, p.partition_index): p.replicas
        for topic in request.body.topics
        for p in topic.partitions
    }
    results = await ctx.admin.alter_partition_reassignments(targets)
    by_topic = group_by_topic(
        results.items(),
        key=lambda item: item[0],
        value=lambda item: R.ReassignablePartitionResponse(
            partition_index=item[0].partition, error_code=item[1][0], error_message=item[1][1]
        ),
    )
    responses = [R.ReassignableTopicResponse(name=name, partitions=entries) for name, entries in by_topic.items()]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, responses=responses)
