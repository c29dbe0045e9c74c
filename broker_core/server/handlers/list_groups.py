"""ListGroups: every group this broker coordinates."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.list_groups import ListGroupsResponse

R = ListGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    result = ctx.group_coordinator.list_groups()
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        groups=[R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type) for g in result.groups],
    )
