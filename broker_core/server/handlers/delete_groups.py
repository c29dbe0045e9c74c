"""DeleteGroups: removes empty groups and their offsets; NON_EMPTY_GROUP while members remain."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.delete_groups import DeleteGroupsResponse

R = DeleteGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    results = ctx.group_coordinator.delete_groups(list(request.body.groups_names))
    return R(
        throttle_time_ms=0,
        results=[
            R.DeletableGroupResult(group_id=group_id, error_code=results[group_id])
            for group_id in dict.fromkeys(request.body.groups_names)
        ],
    )
