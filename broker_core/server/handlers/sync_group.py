"""SyncGroup: parked until the leader's assignment is stored, so the handler returns a future.

From v5 the reply names the group's protocol type and name, and a member
that names others than the group's is answered INCONSISTENT_GROUP_PROTOCOL,
as Kafka does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker_core.coordinator.group.results import SyncGroupResult
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import complete_once_group_settled
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.sync_group import SyncGroupResponse

R = SyncGroupResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.group(ctx, request, acl_checks.Op.READ, body.group_id):
        return R(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment=b"")
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def respond(result: SyncGroupResult) -> None:
        if future.done():
            return
        if result.error == ErrorCode.NONE and not _consistent(body, result):
            future.set_result(R(throttle_time_ms=0, error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment=b""))
            return
        response = R(throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
                     protocol_name=result.protocol_name, assignment=result.assignment)
        if result.error != ErrorCode.NONE:
            future.set_result(response)
            return
        complete_once_group_settled(ctx, body.group_id, future, response,
                                    lambda code: R(throttle_time_ms=0, error_code=code, assignment=b""))

    ctx.group_coordinator.sync_group(
        group_id=body.group_id,
        generation_id=body.generation_id,
        member_id=body.member_id,
        group_instance_id=body.group_instance_id,
        assignments={a.member_id: a.assignment for a in body.assignments},
        respond=respond,
    )
    return future


def _consistent(body: Any, result: SyncGroupResult) -> bool:
    """Whether the protocol the member names (v5+; null: not named) is the group's."""
    return (body.protocol_type is None or body.protocol_type == result.protocol_type) and (
        body.protocol_name is None or body.protocol_name == result.protocol_name
    )
