"""StopReplica: the controller stops (and, for topic deletion, deletes) partitions on this broker."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.stop_replica import StopReplicaResponse

R = StopReplicaResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.CLUSTER_ACTION)
    if refusal is not None:
        return R(error_code=refusal, partition_errors=[])
    outcome = await ctx.state_changes.stop_replicas(request.body)
    errors = [
        R.StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition, error_code=code)
        for tp, code in outcome.partitions.items()
    ]
    return R(error_code=outcome.error, partition_errors=errors)
