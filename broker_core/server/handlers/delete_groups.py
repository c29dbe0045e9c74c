"""DeleteGroups: removes empty groups and their offsets; NON_EMPTY_GROUP while members remain."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.delete_groups import DeleteGroupsResponse

R = DeleteGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    names = list(request.body.groups_names)
    refused = {name for name in names if not acl_checks.group(ctx, request, acl_checks.Op.DELETE, name)}
    results = ctx.group_coordinator.delete_groups([name for name in names if name not in refused])
    results.update({name: ErrorCode.GROUP_AUTHORIZATION_FAILED for name in refused})
    return R(
        throttle_time_ms=0,
        results=[
            R.DeletableGroupResult(group_id=group_id, error_code=results[group_id])
            for group_id in dict.fromkeys(request.body.groups_names)
        ],
    )
