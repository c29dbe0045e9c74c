"""ListGroups: every group this broker coordinates."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.list_groups import ListGroupsResponse

R = ListGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    result = ctx.group_coordinator.list_groups()
    groups = result.groups
    # Describe on the cluster lists every group; otherwise only those the principal may Describe.
    if acl_checks.enabled(ctx) and not acl_checks.cluster(ctx, request, acl_checks.Op.DESCRIBE):
        groups = [g for g in groups if acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, g.group_id)]
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        groups=[R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type) for g in groups],
    )
