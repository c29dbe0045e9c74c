"""JoinGroup: parked until the group's join phase completes, so the handler returns a future.

From v7 the reply names the group's protocol type; the v8 reason is logged at DEBUG.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from broker_core.coordinator.group.member import Protocol
from broker_core.coordinator.group.results import JoinGroupResult
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import complete_once_group_settled
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.join_group import JoinGroupResponse

R = JoinGroupResponse
logger = logging.getLogger(__name__)
# From v4 a member without an id is given one and must join again with it.
MEMBER_ID_REQUIRED_FROM_VERSION = 4


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.group(ctx, request, acl_checks.Op.READ, body.group_id):
        return _response(JoinGroupResult(ErrorCode.GROUP_AUTHORIZATION_FAILED, member_id=body.member_id))
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    if body.reason:
        # Every member of a rebalancing group sends one: at INFO a 1,000-member rebalance would log 1,000 lines.
        logger.debug("member %r joins group %r: %s", body.member_id, body.group_id, body.reason)

    def respond(result: JoinGroupResult) -> None:
        if future.done():
            return
        if result.error != ErrorCode.NONE:
            future.set_result(_response(result))
            return
        complete_once_group_settled(ctx, body.group_id, future, _response(result),
                                    lambda code: _response(JoinGroupResult(code, member_id=result.member_id)))

    ctx.group_coordinator.join_group(
        group_id=body.group_id,
        member_id=body.member_id,
        group_instance_id=body.group_instance_id,
        client_id=request.header.client_id or "",
        # Kafka reports a member's host with a leading slash (Java's InetAddress).
        client_host=f"/{request.client_host}" if request.client_host else "",
        rebalance_timeout_ms=body.rebalance_timeout_ms,
        session_timeout_ms=body.session_timeout_ms,
        protocol_type=body.protocol_type,
        protocols=[Protocol(p.name, p.metadata) for p in body.protocols],
        require_known_member_id=request.api_version >= MEMBER_ID_REQUIRED_FROM_VERSION,
        respond=respond,
    )
    return future


def _response(result: JoinGroupResult) -> Any:
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name or "",
        leader=result.leader_id,
        member_id=result.member_id,
        members=[
            R.JoinGroupResponseMember(member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata)
            for m in result.members
        ],
    )
