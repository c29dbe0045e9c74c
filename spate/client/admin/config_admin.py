"""Configs of topics and brokers: DescribeConfigs, AlterConfigs and IncrementalAlterConfigs for ``Admin``.

A broker's configs are asked of that broker; topic configs (and the
cluster-wide broker default, named ``""``) of any broker. A broker id the
cluster does not list fails at once (BROKER_NOT_AVAILABLE) instead of being
retried until the timeout. Each resource's answer is its own: the call
raises :class:`AdminError` listing those refused, after the others are done.
A broker that does not serve IncrementalAlterConfigs makes that call raise
:class:`~spate.client.errors.UnsupportedApiError` (nothing is changed).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping

from spate.client.admin.admin_types import AlterConfigOp, ConfigEntry, ConfigResource, ConfigResourceType
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.alter_configs import AlterConfigsRequest
from spate.protocol.messages.describe_configs import ConfigSource, DescribeConfigsRequest
from spate.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest


class ConfigAdmin:
    """The config half of the admin client; ``retrier`` is the admin's way of retrying."""

    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def describe_configs(
        self, resources: Iterable[ConfigResource], include_synonyms: bool, deadline: float
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        call: KeyedCall[ConfigResource] = KeyedCall({r: r for r in resources})

        def body(group: list[ConfigResource]) -> Any:
            return DescribeConfigsRequest(
                resources=[
                    DescribeConfigsRequest.DescribeConfigsResource(
                        resource_type=int(r.type), resource_name=r.name, configuration_keys=None
                    )
                    for r in group
                ],
                include_synonyms=include_synonyms,
            )

        def attempt(deadline: float) -> None:
            self._ask_each(
                call, deadline, ApiKey.DESCRIBE_CONFIGS, body, lambda response: response.results,
                "describe configs of", lambda answer: {c.name: _config_entry(c) for c in answer.configs},
            )

        return self._retrier.call_each("describe_configs", call, attempt, deadline).results

    def alter_configs(
        self, configs: Mapping[ConfigResource, Mapping[str, str | None]], validate_only: bool, deadline: float
    ) -> None:
        call: KeyedCall[ConfigResource] = KeyedCall(configs)

        def body(group: list[ConfigResource]) -> Any:
            return AlterConfigsRequest(
                resources=[
                    AlterConfigsRequest.AlterConfigsResource(
                        resource_type=int(r.type),
                        resource_name=r.name,
                        configs=[AlterConfigsRequest.AlterableConfig(name=k, value=v) for k, v in call.pending[r].items()],
                    )
                    for r in group
                ],
                validate_only=validate_only,
            )

        def attempt(deadline: float) -> None:
            self._ask_each(
                call, deadline, ApiKey.ALTER_CONFIGS, body, lambda response: response.responses, "alter configs of"
            )

        self._retrier.call_each("alter_configs", call, attempt, deadline)

    def incremental_alter_configs(
        self, changes: Mapping[ConfigResource, Iterable[AlterConfigOp]], validate_only: bool, deadline: float
    ) -> None:
        call: KeyedCall[ConfigResource] = KeyedCall({r: list(ops) for r, ops in changes.items()})

        def body(group: list[ConfigResource]) -> Any:
            Request = IncrementalAlterConfigsRequest
            return Request(
                resources=[
                    Request.AlterConfigsResource(
                        resource_type=int(r.type),
                        resource_name=r.name,
                        configs=[
                            Request.AlterableConfig(name=op.name, config_operation=int(op.op), value=op.value)
                            for op in call.pending[r]
                        ],
                    )
                    for r in group
                ],
                validate_only=validate_only,
            )

        def attempt(deadline: float) -> None:
            self._ask_each(
                call, deadline, ApiKey.INCREMENTAL_ALTER_CONFIGS, body, lambda response: response.responses,
                "alter configs of",
            )

        self._retrier.call_each("incremental_alter_configs", call, attempt, deadline)

    def _ask_each(
        self,
        call: KeyedCall[ConfigResource],
        deadline: float,
        api_key: ApiKey,
        body: Callable[[list[ConfigResource]], Any],
        answers: Callable[[Any], Iterable[Any]],
        action: str,
        result: Callable[[Any], Any] | None = None,
    ) -> None:
        """Ask each node about its pending resources and settle each resource by its answer."""
        for node, group in self._by_node(call, deadline).items():
            _, response = self._network.request(node, api_key, body(group), deadline=deadline)
            for answer in answers(response):
                resource = ConfigResource(ConfigResourceType(answer.resource_type), answer.resource_name)
                call.settle(
                    resource,
                    ErrorCode.of(answer.error_code),
                    answer.error_message or f"{action} {resource}",
                    result=None if result is None else lambda: result(answer),
                )

    def _by_node(self, call: KeyedCall[ConfigResource], deadline: float) -> dict[int, list[ConfigResource]]:
        """The pending resources by the node to ask: a broker's own resources to it, the rest to any broker.

        A broker id the cluster does not list fails its resource instead.
        """
        snapshot = self._network.metadata.snapshot
        if not snapshot.brokers:
            snapshot = self._network.fetch_metadata([], deadline=deadline)
        groups: dict[int, list[ConfigResource]] = defaultdict(list)
        anywhere: list[ConfigResource] = []
        for resource in list(call.pending):
            if resource.type != ConfigResourceType.BROKER or not resource.name:
                anywhere.append(resource)  # topics, and the cluster-wide broker default ("")
            elif resource.name.isdigit() and int(resource.name) in snapshot.brokers:
                groups[int(resource.name)].append(resource)
            else:
                call.fail(
                    resource,
                    KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, f"no broker {resource.name!r} in the cluster"),
                )
        if anywhere:
            groups[self._network.any_node()].extend(anywhere)
        return groups


def _source(value: int) -> ConfigSource:
    try:
        return ConfigSource(value)
    except ValueError:  # a source newer than this client knows
        return ConfigSource.UNKNOWN


def _config_entry(config: Any) -> ConfigEntry:
    if config.config_source >= 0:
        source = _source(config.config_source)
    else:  # v0 only says whether the value is the default
        source = ConfigSource.DEFAULT_CONFIG if config.is_default else ConfigSource.UNKNOWN
    synonyms = tuple((s.name, s.value, _source(s.source)) for s in config.synonyms)
    return ConfigEntry(config.name, config.value, source, bool(config.read_only), bool(config.is_sensitive), synonyms)
