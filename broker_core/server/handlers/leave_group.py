"""LeaveGroup: one member (v0-v2) or a batch of members by id or instance id (v3)."""

from __future__ import annotations

from typing import Any

from broker_core.coordinator.group.results import MemberIdentity
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.leave_group import LeaveGroupResponse

R = LeaveGroupResponse
BATCHED_FROM_VERSION = 3


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    batched = request.api_version >= BATCHED_FROM_VERSION
    if not acl_checks.group(ctx, request, acl_checks.Op.READ, body.group_id):
        denied = ErrorCode.GROUP_AUTHORIZATION_FAILED
        return R(throttle_time_ms=0, error_code=denied, members=[]) if batched else R(throttle_time_ms=0,
                                                                                     error_code=denied)
    if batched:
        members = [MemberIdentity(m.member_id, m.group_instance_id) for m in body.members]
    else:
        members = [MemberIdentity(body.member_id)]
    result = ctx.group_coordinator.leave_group(group_id=body.group_id, members=members)
    if batched:
        return R(
            throttle_time_ms=0,
            error_code=result.error,
            members=[
                R.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error)
                for m in result.members
            ],
        )
    # Before v3 there is one member and one error: the member's, unless the whole request failed.
    error = result.error
    if error == ErrorCode.NONE and result.members:
        error = result.members[0].error
    return R(throttle_time_ms=0, error_code=error)
