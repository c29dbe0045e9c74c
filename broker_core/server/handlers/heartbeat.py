"""Heartbeat: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.heartbeat import HeartbeatResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.group(ctx, request, acl_checks.Op.READ, body.group_id):
        return HeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = ctx.group_coordinator.heartbeat(
        group_id=body.group_id,
        member_id=body.member_id,
        group_instance_id=body.group_instance_id,
        generation_id=body.generation_id,
    )
    return HeartbeatResponse(throttle_time_ms=0, error_code=error)
