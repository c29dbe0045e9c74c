"""ControlledShutdown: a broker about to stop asks the active controller to move its leadership away.

Only the active controller answers (it runs in this process when this broker
won the election); any other broker answers NOT_CONTROLLER, and the asking
broker looks for the controller again. The answer lists the partitions whose
leadership could not move.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.controlled_shutdown import ControlledShutdownResponse

R = ControlledShutdownResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.CLUSTER_ACTION)
    if refusal is not None:
        return R(error_code=refusal, remaining_partitions=[])
    try:
        remaining = await ctx.membership.controlled_shutdown(body.broker_id, body.broker_epoch)
    except Exception as exc:
        return R(error_code=error_code_for(exc, where="controlled_shutdown"), remaining_partitions=[])
    partitions = [R.RemainingPartition(topic_name=tp.topic, partition_index=tp.partition) for tp in sorted(remaining)]
    return R(error_code=ErrorCode.NONE, remaining_partitions=partitions)
