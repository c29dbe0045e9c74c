"""DescribeConfigs: a topic's effective configs with their sources, or the broker's.

From v3 each entry carries its type (Kafka's ``ConfigType`` ids) and, when
the request asks for it, its documentation. With an authorizer each resource
needs DescribeConfigs.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.config_source import EffectiveValue
from broker_core.config.definitions import PropertyDef, PropertyType
from broker_core.config.dynamic_broker_config import is_dynamic, is_sensitive
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
        return await _describe_topic(ctx, resource, include_synonyms, include_docs)
    if resource.resource_type == BROKER:
        return _describe_broker(ctx, resource.resource_name, resource.configuration_keys, include_synonyms,
                                include_docs)
    raise KafkaError(ErrorCode.INVALID_REQUEST, f"unsupported config resource type {resource.resource_type}")


async def _describe_topic(ctx: BrokerContext, resource: Any, include_synonyms: bool, include_docs: bool) -> list[Any]:
    overrides = await ctx.admin.topic_configs(resource.resource_name)
    broker_config = ctx.current_config
    values = effective_topic_config(broker_config, overrides)
    dynamic = ctx.dynamic_config.dynamic if ctx.dynamic_config is not None else None
    if dynamic is not None:  # a broker default set dynamically is reported as such, not as static
        for name, value in values.items():
            if value.source == ConfigSource.STATIC_BROKER_CONFIG:
                synonym = next(s for s in TOPIC_CONFIGS[name].broker_synonyms if broker_config.is_set(s))
                values[name] = value._replace(source=dynamic.layer_source(synonym))

    def synonyms(name: str) -> list[Any]:
        return [
            R.DescribeConfigsSynonym(
                name=s.name, value=s.value,
                source=dynamic.layer_source(s.name) if dynamic and s.source == ConfigSource.STATIC_BROKER_CONFIG
                else s.source)
            for s in topic_config_synonyms(broker_config, overrides, name)
        ]

    definitions = {name: entry.definition for name, entry in TOPIC_CONFIGS.items()}
    return _entries(values, resource.configuration_keys, synonyms if include_synonyms else None,
                    read_only=lambda _name: False, definitions=definitions, include_docs=include_docs)


def _describe_broker(ctx: BrokerContext, name: str, keys: list[str] | None, include_synonyms: bool,
                     include_docs: bool) -> list[Any]:
    """This broker's configuration in force (its id) or the cluster-wide dynamic defaults (``""``)."""
    manager = ctx.dynamic_config
    if manager is None:
        if name not in ("", str(ctx.node_id)):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"this is broker {ctx.node_id}, not {name}")
        return _entries(ctx.config.describe(), keys, None, read_only=lambda _name: True,
                        definitions=BROKER_PROPERTIES, include_docs=include_docs)
    if name and name != str(ctx.node_id):
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {ctx.node_id} or empty string, but received {name}")
    described = manager.dynamic.describe(per_broker=bool(name))
    values = {config: value for config, (value, _) in described.items()}

    def synonyms(config: str) -> list[Any]:
        return [R.DescribeConfigsSynonym(name=s.name, value=None if is_sensitive(s.name) else s.value, source=s.source)
                for s in described[config][1]]

    return _entries(values, keys, synonyms if include_synonyms else None,
                    read_only=lambda config: not is_dynamic(config), definitions=BROKER_PROPERTIES,
                    include_docs=include_docs)


def _entries(
    values: Mapping[str, EffectiveValue],
    keys: list[str] | None,
    synonyms: Any,
    *,
    read_only: Callable[[str], bool],
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
            value=None if is_sensitive(name) else values[name].value,
            read_only=read_only(name),
            is_default=values[name].source == ConfigSource.DEFAULT_CONFIG,
            config_source=values[name].source,
            is_sensitive=is_sensitive(name),
            synonyms=synonyms(name) if synonyms else [],
            config_type=config_type(name),
            documentation=documentation(name),
        )
        for name in names
    ]
