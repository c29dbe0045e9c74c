"""DescribeCluster: the cluster id, the controller and the live brokers, as this broker knows them."""

from __future__ import annotations

from typing import Any

from broker_core.security.authorizer.acl import ResourceType
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_cluster import ENDPOINT_TYPE_BROKERS, DescribeClusterResponse
from spate.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED

R = DescribeClusterResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    view = ctx.metadata
    if request.body.endpoint_type != ENDPOINT_TYPE_BROKERS:
        # A ZooKeeper-era broker has no controller endpoints to list.
        return R(
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message=f"endpoint type {request.body.endpoint_type} is not served; brokers only",
            endpoint_type=request.body.endpoint_type,
            cluster_id=view.cluster_id(),
            brokers=[],
        )
    brokers = [
        R.DescribeClusterBroker(broker_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in view.alive_brokers()
    ]
    return R(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        endpoint_type=ENDPOINT_TYPE_BROKERS,
        cluster_id=view.cluster_id(),
        controller_id=view.controller_id(),
        brokers=brokers,
        cluster_authorized_operations=(acl_checks.authorized_operations(ctx, request, ResourceType.CLUSTER)
                                       if request.body.include_cluster_authorized_operations
                                       else AUTHORIZED_OPERATIONS_OMITTED),
    )
