"""IncrementalAlterConfigs: SET, DELETE, APPEND or SUBTRACT single keys of a topic's overrides or of a broker's
dynamic configs."""

from __future__ import annotations

from typing import Any

from broker_core.config.incremental_configs import ConfigOp
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import zookeeper_outcome
from broker_core.server.handlers.config_resources import BROKER, TOPIC, dynamic_config, refuse_resource_type
from broker_core.server.topic_admin import OK, Outcome
from spate.protocol.connection import Request
from spate.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsResponse

R = IncrementalAlterConfigsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    responses = []
    for resource in body.resources:
        refusal = acl_checks.config_refusal(ctx, request, acl_checks.Op.ALTER_CONFIGS, resource.resource_type,
                                            resource.resource_name)
        code, message = refusal or await _alter(ctx, resource, body.validate_only)
        responses.append(
            R.AlterConfigsResourceResponse(
                error_code=code,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return R(throttle_time_ms=0, responses=responses)


async def _alter(ctx: BrokerContext, resource: Any, validate_only: bool) -> Outcome:
    try:
        ops = [ConfigOp(c.name, c.config_operation, c.value) for c in resource.configs]
        if resource.resource_type == BROKER:
            await dynamic_config(ctx).incremental_alter(resource.resource_name, ops, validate_only=validate_only)
        elif resource.resource_type == TOPIC:
            await ctx.admin.incremental_alter_topic_configs(resource.resource_name, ops, validate_only=validate_only)
        else:
            refuse_resource_type(resource.resource_type)
    except Exception as exc:
        return zookeeper_outcome(exc, where="incremental_alter_configs")
    return OK
