"""Config resource types as DescribeConfigs and (Incremental)AlterConfigs number them."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from spate.protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from broker_core.server.context import BrokerContext
    from broker_core.server.dynamic_config_manager import DynamicConfigManager

TOPIC = 2
BROKER = 4


def refuse_resource_type(resource_type: int) -> NoReturn:
    raise KafkaError(ErrorCode.INVALID_REQUEST,
                     f"AlterConfigs is only supported for topics and brokers, but resource type is {resource_type}")


def dynamic_config(ctx: BrokerContext) -> DynamicConfigManager:
    if ctx.dynamic_config is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "broker configs are static on this broker")
    return ctx.dynamic_config
