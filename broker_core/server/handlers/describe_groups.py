"""DescribeGroups: state, protocol and members of each group; unknown groups read as Dead."""

from __future__ import annotations

from typing import Any

from broker_core.security.authorizer.acl import ResourceType
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_groups import AUTHORIZED_OPERATIONS_OMITTED, DescribeGroupsResponse

R = DescribeGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    groups = []
    for group_id in request.body.groups:
        if not acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, group_id):
            groups.append(R.DescribedGroup(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, group_id=group_id,
                                           group_state="", protocol_type="", protocol_data="", members=[]))
            continue
        described = ctx.group_coordinator.describe_group(group_id)
        groups.append(
            R.DescribedGroup(
                error_code=described.error,
                group_id=described.group_id,
                group_state=described.state,
                protocol_type=described.protocol_type,
                protocol_data=described.protocol_name,
                members=[
                    R.DescribedGroupMember(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in described.members
                ],
                authorized_operations=(acl_checks.authorized_operations(ctx, request, ResourceType.GROUP, group_id)
                                       if getattr(request.body, "include_authorized_operations", False)
                                       else AUTHORIZED_OPERATIONS_OMITTED),
            )
        )
    return R(throttle_time_ms=0, groups=groups)
