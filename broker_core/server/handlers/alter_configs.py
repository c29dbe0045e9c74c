"""AlterConfigs: replace a topic's overrides (the non-incremental API)."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import outcome
from broker_core.server.handlers.config_resources import TOPIC
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.alter_configs import AlterConfigsResponse

R = AlterConfigsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    responses = []
    for resource in body.resources:
        code, message = outcome(_alter, ctx, resource, body.validate_only, where="alter_configs")
        responses.append(
            R.AlterConfigsResourceResponse(
                error_code=code,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return R(throttle_time_ms=0, responses=responses)


def _alter(ctx: BrokerContext, resource: Any, validate_only: bool) -> None:
    if resource.resource_type != TOPIC:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "only topic configs can be altered; broker configs are static")
    configs = {c.name: c.value for c in resource.configs}
    ctx.topics.alter_configs(resource.resource_name, configs, validate_only=validate_only)
