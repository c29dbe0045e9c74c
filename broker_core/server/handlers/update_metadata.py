"""UpdateMetadata: the controller's picture of the cluster, which this broker's metadata cache takes in."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.update_metadata import UpdateMetadataResponse

R = UpdateMetadataResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.CLUSTER_ACTION)
    if refusal is not None:
        return R(error_code=refusal)
    outcome = await ctx.state_changes.update_metadata(request.body)
    return R(error_code=outcome.error)
