"""ListPartitionReassignments: the partitions being moved, with their adding and removing replicas."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.list_partition_reassignments import ListPartitionReassignmentsResponse
from spate.structs import TopicPartition, group_by_topic

R = ListPartitionReassignmentsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.DESCRIBE)
    if refusal is not None:
        return R(throttle_time_ms=0, error_code=refusal, topics=[])
    topics = request.body.topics
    wanted = None if topics is None else [TopicPartition(t.name, p) for t in topics for p in t.partition_indexes]
    ongoing = await ctx.admin.list_partition_reassignments(wanted)
    by_topic = group_by_topic(
        ongoing.items(),
        key=lambda item: item[0],
        value=lambda item: R.OngoingPartitionReassignment(
            partition_index=item[0].partition,
            replicas=list(item[1].replicas),
            adding_replicas=list(item[1].adding),
            removing_replicas=list(item[1].removing),
        ),
    )
    return R(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        topics=[R.OngoingTopicReassignment(name=name, partitions=entries) for name, entries in by_topic.items()],
    )
