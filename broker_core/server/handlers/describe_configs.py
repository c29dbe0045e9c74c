"""DescribeConfigs: a topic's effective configs with their sources, or the broker's.

From v3 each entry carries its type (Kafka's ``ConfigType`` ids) and, when
the request asks for it, its documentation. With an authorizer each resource
needs DescribeConfigs.
"""

from __future__ import annotations

from typing import Any, Mapping

from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.config_source import EffectiveValue
from broker_core.config.definitions import PropertyDef, PropertyType
from broker_core.config.security_properties import SENSITIVE_PROPERTIES
from broker_core.config.topic_config import TOPIC_CONFIGS, effective_topic_config, topic_config_synonyms
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import zookeeper_outcome
from broker_core.server.handlers.config_resources import BROKER, TOPIC
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.describe_configs import ConfigSource, DescribeConfigsResponse

R = DescribeConfigsResponse
# Kafka's DescribeConfigsResponse.ConfigType ids.
CONFIG_TYPES = {
    PropertyType.BOOLEAN: 1,
    PropertyType.STRING: 2,
    PropertyType.INT: 3,
    PropertyType.SHORT: 4,
    PropertyType.LONG: 5,
    PropertyType.DOUBLE: 6,
    PropertyType.LIST: 7,
}


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    results = []
    for resource in body.resources:
        try:
            refusal = acl_checks.config_refusal(ctx, request, acl_checks.Op.DESCRIBE_CONFIGS, resource.resource_type,
                                                resource.resource_name)
            if refusal is not None:
                raise KafkaError(*refusal)
            configs = await _describe(ctx, resource, body.include_synonyms, body.include_documentation)
        except Exception as exc:
            code, message = zookeeper_outcome(exc, where="describe_configs")
            results.append(
                R.DescribeConfigsResult(
                    error_code=code,
                    error_message=message,
                    resource_type=resource.resource_type,
                    resource_name=resource.resource_name,
                    configs=[],
                )
            )
        else:
            results.append(
                R.DescribeConfigsResult(
                    error_code=ErrorCode.NONE,
                    resource_type=resource.resource_type,
                    resource_name=resource.resource_name,
                    configs=configs,
                )
            )
    return R(throttle_time_ms=0, results=results)


async def _describe(ctx: BrokerContext, resource: Any, include_synonyms: bool, include_docs: bool) -> list[Any]:
    if resource.resource_type == TOPIC:
        overrides = await ctx.admin.topic_configs(resource.resource_name)
        values = effective_topic_config(ctx.config, overrides)

        def synonyms(name: str) -> list[Any]:
            return [
                R.DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source)
                for s in topic_config_synonyms(ctx.config, overrides, name)
            ]

        definitions = {name: entry.definition for name, entry in TOPIC_CONFIGS.items()}
        return _entries(values, resource.configuration_keys, synonyms if include_synonyms else None, read_only=False,
                        definitions=definitions, include_docs=include_docs)
    if resource.resource_type == BROKER:
        if resource.resource_name not in ("", str(ctx.node_id)):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"this is broker {ctx.node_id}, not {resource.resource_name}")
        return _entries(ctx.config.describe(), resource.configuration_keys, None, read_only=True,
                        definitions=BROKER_PROPERTIES, include_docs=include_docs)
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"unsupported config resource type {resource.resource_type}")


def _entries(
    values: Mapping[str, EffectiveValue],
    keys: list[str] | None,
    synonyms: Any,
    *,
    read_only: bool,
    definitions: Mapping[str, PropertyDef],
    include_docs: bool,
) -> list[Any]:
    names = sorted(values) if keys is None else [k for k in keys if k in values]

    def config_type(name: str) -> int:
        definition = definitions.get(name)
        return CONFIG_TYPES.get(definition.type, 0) if definition is not None else 0

    def documentation(name: str) -> str | None:
        definition = definitions.get(name)
        return definition.doc if include_docs and definition is not None else None

    return [
        R.DescribeConfigsResourceResult(
            name=name,
            value=None if name in SENSITIVE_PROPERTIES else values[name].value,
            read_only=read_only,
            is_default=values[name].source == ConfigSource.DEFAULT_CONFIG,
            config_source=values[name].source,
            is_sensitive=name in SENSITIVE_PROPERTIES,
            synonyms=synonyms(name) if synonyms else [],
            config_type=config_type(name),
            documentation=documentation(name),
        )
        for name in names
    ]
