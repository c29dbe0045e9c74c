"""Dynamic broker configs: which broker properties may change without a restart, and what a broker then runs with.

As Kafka's ``DynamicBrokerConfig``, a broker's effective configuration has
four layers, highest precedence first: the broker's own dynamic configs
(AlterConfigs on resource ``BROKER`` named by its id, stored in
``/config/brokers/<id>``), the cluster-wide dynamic defaults (resource name
``""``, ``/config/brokers/<default>``), the static properties file and
``--override`` arguments, then the built-in defaults.

Only Kafka's dynamically updatable broker configs may be set this way; any
other broker property is refused ("Cannot update these configs
dynamically"). Of those, :data:`APPLIED_AT_RUNTIME` take effect on a running
broker at once; every accepted config takes effect when the broker starts.
Kafka's dynamic configs that Spate has no use for (Kerberos, remote storage,
metric reporters ...) are kept and reported, like Kafka keeps custom configs.

Errors are :class:`ConfigError` (INVALID_CONFIG on the wire) with Kafka's
messages, and :class:`KafkaError` INVALID_REQUEST for a bad incremental
operation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.config_source import ConfigSynonym, EffectiveValue
from broker_core.config.definitions import InvalidValue, PropertyType, render_value
from broker_core.config.errors import ConfigError
from broker_core.config.incremental_configs import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    OPERATION_NAMES,
    ConfigOp,
    check_ops,
    split_list,
)
from broker_core.config.security_properties import SENSITIVE_PROPERTIES
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.describe_configs import ConfigSource

# Kafka's ServerTopicConfigSynonyms, first broker name of each topic config, without message.format.version.
LOG_CONFIGS = frozenset({
    "log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes",
    "log.flush.interval.messages", "log.flush.interval.ms", "log.retention.bytes", "log.retention.ms",
    "message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
    "min.insync.replicas", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "log.preallocate", "log.message.timestamp.type",
    "log.message.timestamp.difference.max.ms", "log.message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms", "log.message.downconversion.enable", "log.local.retention.ms",
    "log.local.retention.bytes",
})  # fmt: skip
LOG_CLEANER_CONFIGS = frozenset({
    "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
    "log.cleaner.io.buffer.size", "message.max.bytes", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.backoff.ms",
})  # fmt: skip
THREAD_POOL_CONFIGS = frozenset({"num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir",
                                 "background.threads"})
# SslConfigs.RECONFIGURABLE_CONFIGS: per listener only (listener.name.<l>.<config>).
SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.truststore.certificates",
})  # fmt: skip
LISTENER_CONFIGS = frozenset({
    "advertised.listeners", "listeners", "listener.security.protocol.map", "principal.builder.class",
    "ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keystore.type",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type",
    "ssl.truststore.location", "ssl.truststore.password", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation", "ssl.client.auth",
    "ssl.engine.factory.class", "sasl.mechanism.inter.broker.protocol", "sasl.jaas.config",
    "sasl.enabled.mechanisms", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds", "max.connections", "max.connection.creation.rate", "num.network.threads",
})  # fmt: skip
SOCKET_SERVER_CONFIGS = frozenset({"max.connections.per.ip", "max.connections.per.ip.overrides", "max.connections",
                                   "max.connection.creation.rate"})
OTHER_DYNAMIC_CONFIGS = frozenset({
    "metric.reporters", "producer.id.expiration.ms", "transaction.partition.verification.enable",
    "remote.log.index.file.cache.total.size.bytes", "remote.fetch.max.wait.ms",
    "remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.fetch.max.bytes.per.second",
    # QuotaConfigs.brokerQuotaConfigs
    "leader.replication.throttled.rate", "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
})  # fmt: skip
DYNAMIC_CONFIGS = (SECURITY_CONFIGS | LOG_CLEANER_CONFIGS | LOG_CONFIGS | THREAD_POOL_CONFIGS | LISTENER_CONFIGS
                   | SOCKET_SERVER_CONFIGS | OTHER_DYNAMIC_CONFIGS)
_CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset({"max.connections", "max.connection.creation.rate", "num.network.threads"})
# Settable for one broker only (its listeners, its key stores), never as a cluster-wide default.
PER_BROKER_CONFIGS = (SECURITY_CONFIGS | LISTENER_CONFIGS) - _CLUSTER_LEVEL_LISTENER_CONFIGS

# What a running Spate broker changes at once: every hosted log's defaults and the connection limits.
APPLIED_AT_RUNTIME = (LOG_CONFIGS & frozenset(BROKER_PROPERTIES)) | (
    SOCKET_SERVER_CONFIGS & frozenset(BROKER_PROPERTIES)) - {"unclean.leader.election.enable"}

# DynamicBrokerConfig.brokerConfigSynonyms: names of one setting, highest precedence first.
_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)
_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")

DEFAULT_ENTITY = "<default>"
# Dynamic in Kafka, static in Spate: the socket server binds its listeners and sets up their TLS and SASL once,
# when the broker is created.
STATIC_IN_SPATE = ((LISTENER_CONFIGS | SECURITY_CONFIGS) & frozenset(BROKER_PROPERTIES)) - _CLUSTER_LEVEL_LISTENER_CONFIGS


def broker_config_synonyms(name: str) -> tuple[str, ...]:
    for group in _SYNONYM_GROUPS:
        if name in group:
            return group
    match = _LISTENER_CONFIG.fullmatch(name)
    return (name, match.group(1)) if match else (name,)


def _base_name(name: str) -> str:
    match = _LISTENER_CONFIG.fullmatch(name)
    return match.group(1) if match else name


def validate_dynamic_configs(props: Mapping[str, str], *, per_broker: bool) -> None:
    """Kafka's ``DynamicBrokerConfig.validateConfigs``: raise :class:`ConfigError` for what cannot be set."""
    def check(names: set[str], message: str) -> None:
        if names:
            raise ConfigError(f"{message}: {', '.join(sorted(names))}")

    check({n for n in props if _base_name(n) not in DYNAMIC_CONFIGS and _base_name(n) in BROKER_PROPERTIES},
          "Cannot update these configs dynamically")
    check({n for n in props if _base_name(n) not in DYNAMIC_CONFIGS},
          "Unknown broker configs (not one of Kafka's dynamic broker configs)")
    check({n for n in props if _base_name(n) in STATIC_IN_SPATE},
          "Spate does not change its listeners or their TLS and SASL settings at runtime; set these in the "
          "broker's properties file")
    check({n for n in props if n in SECURITY_CONFIGS},
          "These security configs can be dynamically updated only per-listener using the listener prefix")
    check({n for n in props if _base_name(n) in SENSITIVE_PROPERTIES},
          "Password configs cannot be updated dynamically (no password.encoder.secret); set them in the "
          "broker's properties file")
    for name, text in props.items():
        definition = BROKER_PROPERTIES.get(_base_name(name))
        if definition is not None:
            try:
                definition.parse(text)
            except InvalidValue as exc:
                raise ConfigError(f"Invalid value {text!r}: {exc}", key=name, value=text) from None
    if not per_broker:
        check({n for n in props if _base_name(n) in PER_BROKER_CONFIGS and
               (n == _base_name(n) or _base_name(n) not in _CLUSTER_LEVEL_LISTENER_CONFIGS)},
              "Cannot update these configs at default cluster level, broker id must be specified")


def is_dynamic(name: str) -> bool:
    """One of Kafka's dynamic broker configs (``listener.name.<l>.`` prefixed or not)."""
    return _base_name(name) in DYNAMIC_CONFIGS


def is_sensitive(name: str) -> bool:
    """A password or key, never shown (``listener.name.<l>.`` prefixed or not)."""
    return _base_name(name) in SENSITIVE_PROPERTIES


def is_list_config(name: str) -> bool:
    definition = BROKER_PROPERTIES.get(_base_name(name))
    return definition is not None and definition.type is PropertyType.LIST


def default_text(name: str) -> str | None:
    definition = BROKER_PROPERTIES.get(_base_name(name))
    return render_value(definition.default) if definition is not None else None


@dataclass
class DynamicBrokerConfig:
    """The static configuration and the two dynamic layers of one broker; :attr:`current` is what it runs with."""

    static: BrokerConfig
    defaults: dict[str, str] = field(default_factory=dict)
    per_broker: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.current = merged_config(self.static, self.defaults, self.per_broker)

    @property
    def node_id(self) -> int:
        return self.static.node_id

    def describe(self, *, per_broker: bool) -> dict[str, tuple[EffectiveValue, list[ConfigSynonym]]]:
        """DescribeConfigs of this broker (``per_broker``) or of the cluster-wide defaults: name -> (value with
        its source, its synonyms highest precedence first)."""
        if not per_broker:
            names = sorted(self.defaults)
        else:
            names = sorted(set(BROKER_PROPERTIES) | set(self.defaults) | set(self.per_broker))
        out = {}
        for name in names:
            synonyms = self._synonyms(name)
            if not per_broker:
                synonyms = [s for s in synonyms if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
            if name in self.current.values and per_broker:
                value = render_value(self.current.values[name])
            else:
                value = synonyms[0].value if synonyms else None
            source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
            out[name] = (EffectiveValue(value, source), synonyms)
        return out

    def layer_source(self, name: str) -> ConfigSource:
        """Where a broker property set in the configuration in force comes from."""
        if name in self.per_broker:
            return ConfigSource.DYNAMIC_BROKER_CONFIG
        if name in self.defaults:
            return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        return ConfigSource.STATIC_BROKER_CONFIG

    def _synonyms(self, name: str) -> list[ConfigSynonym]:
        static = self.static.as_properties()
        layers = (
            (self.per_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
            (self.defaults, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            (static, ConfigSource.STATIC_BROKER_CONFIG),
        )
        found: list[ConfigSynonym] = []
        for values, source in layers:
            found.extend(ConfigSynonym(s, values[s], source) for s in broker_config_synonyms(name) if s in values)
        for synonym in broker_config_synonyms(name):
            if synonym in BROKER_PROPERTIES and BROKER_PROPERTIES[synonym].default is not None:
                found.append(ConfigSynonym(synonym, default_text(synonym), ConfigSource.DEFAULT_CONFIG))
        while found and found[0].name != name:  # describing log.retention.hours skips the ms/minutes entries
            found.pop(0)
        return found


def merged_config(static: BrokerConfig, defaults: Mapping[str, str], per_broker: Mapping[str, str]) -> BrokerConfig:
    """``static`` with the dynamic layers on top (the configs Spate knows; others are only kept)."""
    props = dict(static.as_properties())
    for layer in (defaults, per_broker):
        props.update({k: v for k, v in layer.items() if _base_name(k) in BROKER_PROPERTIES})
    merged = BrokerConfig.from_properties(props, origin="dynamic broker config")
    return BrokerConfig(values=merged.values, explicit=merged.explicit, path=static.path)


def apply_broker_ops(current: Mapping[str, str], ops: Sequence[ConfigOp]) -> dict[str, str]:
    """IncrementalAlterConfigs on one dynamic layer, as Kafka's ``prepareIncrementalConfigs``: APPEND and SUBTRACT
    start from the layer's value, else the property's default; the result still has to pass
    :func:`validate_dynamic_configs`."""
    check_ops(ops)
    props = dict(current)
    for op in ops:
        if op.operation == OP_DELETE:
            props.pop(op.name, None)
            continue
        if op.value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"{OPERATION_NAMES[op.operation]} of {op.name} has a null value")
        if op.operation == OP_SET:
            props[op.name] = op.value
            continue
        if not is_list_config(op.name):
            raise KafkaError(ErrorCode.INVALID_REQUEST,
                             f"Config value {OPERATION_NAMES[op.operation].lower()} is not allowed for config key: "
                             f"{op.name}")
        old = split_list(props.get(op.name, default_text(op.name) or ""))
        values = split_list(op.value)
        new = old + [v for v in values if v not in old] if op.operation == OP_APPEND else [
            v for v in old if v not in values]
        props[op.name] = ",".join(new)
    return props
