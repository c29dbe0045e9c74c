"""ListGroups: every group this broker coordinates.

From v4 the request may filter by state and each group names its state; from
v5 it may filter by type and each group names its type: classic, or consumer
(KIP-848). Filters match Kafka's names without regard to case. With an
authorizer, Describe on the cluster lists every group, else only the groups
the principal may Describe.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.list_groups import ListGroupsResponse

R = ListGroupsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    states = {state.lower() for state in body.states_filter}
    types = {kind.lower() for kind in body.types_filter}
    result = ctx.group_coordinator.list_groups()
    listed = [g for g in result.groups
              if (not states or g.state.lower() in states) and (not types or g.group_type in types)]
    if acl_checks.enabled(ctx) and not acl_checks.cluster(ctx, request, acl_checks.Op.DESCRIBE):
        listed = [g for g in listed if acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, g.group_id)]
    return R(
        throttle_time_ms=0,
        error_code=result.error,
        groups=[R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state,
                              group_type=g.group_type) for g in listed],
    )
