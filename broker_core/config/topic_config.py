"""Topic-level configs: names, validation, and their broker-wide defaults.

Each topic config has broker synonyms, consulted in Kafka's order when a topic
sets no override (``retention.ms`` falls back to ``log.retention.ms``, then
``log.retention.minutes``, then ``log.retention.hours``). A topic's overrides
are stored as validated canonical text; everything here that reads them
re-parses that text, so values stay typed at the edges.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.broker_properties import (
    BROKER_PROPERTIES,
    CLEANUP_POLICIES,
    COMPACTION_PLANNERS,
    COMPRESSION_TYPES,
    MIN_INDEX_BYTES,
    TIMESTAMP_TYPES,
)
from broker_core.config.config_source import ConfigSynonym, EffectiveValue
from broker_core.config.definitions import (
    LONG_MAX,
    ConfigValue,
    InvalidValue,
    PropertyDef,
    PropertyType,
    Range,
    Validator,
    ValidList,
    ValidString,
    at_least,
    render_value,
)
from broker_core.config.deprecated_configs import is_ignored_topic_config
from broker_core.config.errors import ConfigError
from spate.protocol.messages.describe_configs import ConfigSource

BrokerDefault = Callable[[BrokerConfig], ConfigValue]


@dataclass(frozen=True)
class ArchivePath:
    """A Delta table location (a path or a URI), or empty for none; no control characters."""

    def check(self, value: ConfigValue) -> None:
        if value is None or value == "":
            return
        if not isinstance(value, str) or any(ord(c) < 32 for c in value):
            raise InvalidValue("must name a Delta table (a path or a URI such as s3://bucket/topic)")

    def describe(self) -> str:
        return "a Delta table path or URI, empty for none"


@dataclass(frozen=True)
class TopicConfigDef:
    """A topic config, the broker properties that default it, and its ``LogConfig`` field."""

    definition: PropertyDef
    broker_synonyms: tuple[str, ...]
    broker_default: BrokerDefault
    log_config_field: str | None = None

    @property
    def name(self) -> str:
        return self.definition.name


def _t(
    name: str,
    kind: PropertyType,
    default: ConfigValue,
    doc: str,
    validator: Validator | None,
    broker_synonyms: tuple[str, ...],
    *,
    log_field: bool = False,
    broker_default: BrokerDefault | None = None,
) -> TopicConfigDef:
    primary = broker_synonyms[0]
    return TopicConfigDef(
        definition=PropertyDef(name=name, type=kind, default=default, doc=doc, validator=validator),
        broker_synonyms=broker_synonyms,
        broker_default=broker_default or (lambda config: config.get(primary)),
        log_config_field=name.replace(".", "_") if log_field else None,
    )


BOOLEAN, INT, LONG, DOUBLE = PropertyType.BOOLEAN, PropertyType.INT, PropertyType.LONG, PropertyType.DOUBLE
STRING, LIST = PropertyType.STRING, PropertyType.LIST

_DEFINITIONS = (
    _t(
        "cleanup.policy",
        LIST,
        ("delete",),
        "delete, compact, or both.",
        ValidList(CLEANUP_POLICIES),
        ("log.cleanup.policy",),
        log_field=True,
    ),
    _t(
        "compression.type",
        STRING,
        "producer",
        "Compression of stored batches; producer keeps the producer's.",
        ValidString(COMPRESSION_TYPES),
        ("compression.type",),
    ),
    _t(
        "delete.retention.ms",
        LONG,
        86400000,
        "How long tombstones survive compaction.",
        at_least(0),
        ("log.cleaner.delete.retention.ms",),
        log_field=True,
    ),
    _t(
        "file.delete.delay.ms",
        LONG,
        60000,
        "Delay before a removed segment's files are deleted.",
        at_least(0),
        ("log.segment.delete.delay.ms",),
        log_field=True,
    ),
    _t(
        "flush.messages",
        LONG,
        LONG_MAX,
        "fsync after this many messages.",
        at_least(1),
        ("log.flush.interval.messages",),
        log_field=True,
    ),
    _t(
        "flush.ms",
        LONG,
        LONG_MAX,
        "fsync when the oldest unflushed message is this old.",
        at_least(0),
        ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
        log_field=True,
        broker_default=lambda config: config.log_flush_interval_ms,
    ),
    _t(
        "index.interval.bytes",
        INT,
        4096,
        "Bytes of log between two offset index entries.",
        at_least(0),
        ("log.index.interval.bytes",),
        log_field=True,
    ),
    _t(
        "max.compaction.lag.ms",
        LONG,
        LONG_MAX,
        "Messages older than this are due for compaction.",
        at_least(1),
        ("log.cleaner.max.compaction.lag.ms",),
        log_field=True,
    ),
    _t(
        "max.message.bytes",
        INT,
        1048588,
        "Largest record batch the topic accepts.",
        at_least(0),
        ("message.max.bytes",),
        log_field=True,
    ),
    _t(
        "message.timestamp.difference.max.ms",
        LONG,
        LONG_MAX,
        "Largest allowed gap between a CreateTime timestamp and the broker's clock.",
        at_least(0),
        ("log.message.timestamp.difference.max.ms",),
        log_field=True,
    ),
    _t(
        "message.timestamp.before.max.ms",
        LONG,
        LONG_MAX,
        "How far in the past a CreateTime timestamp may be.",
        at_least(0),
        ("log.message.timestamp.before.max.ms",),
        log_field=True,
    ),
    _t(
        "message.downconversion.enable",
        BOOLEAN,
        True,
        "Whether Fetch requests before v4 may read the topic, converted to the legacy message formats.",
        None,
        ("log.message.downconversion.enable",),
        log_field=True,
    ),
    _t(
        "message.timestamp.after.max.ms",
        LONG,
        LONG_MAX,
        "How far in the future a CreateTime timestamp may be.",
        at_least(0),
        ("log.message.timestamp.after.max.ms",),
        log_field=True,
    ),
    _t(
        "message.timestamp.type",
        STRING,
        "CreateTime",
        "Timestamp the log keeps: the producer's or the append time.",
        ValidString(TIMESTAMP_TYPES),
        ("log.message.timestamp.type",),
        log_field=True,
    ),
    _t(
        "min.cleanable.dirty.ratio",
        DOUBLE,
        0.5,
        "Dirty share of the log that makes it due for compaction.",
        Range(0.0, 1.0),
        ("log.cleaner.min.cleanable.ratio",),
        log_field=True,
    ),
    _t(
        "min.compaction.lag.ms",
        LONG,
        0,
        "Messages younger than this are never compacted.",
        at_least(0),
        ("log.cleaner.min.compaction.lag.ms",),
        log_field=True,
    ),
    _t(
        "min.insync.replicas",
        INT,
        1,
        "In-sync replicas an acks=all write needs.",
        at_least(1),
        ("min.insync.replicas",),
    ),
    _t("preallocate", BOOLEAN, False, "Reserve a new segment's segment.bytes on disk when it is created.", None,
       ("log.preallocate",), log_field=True),
    _t(
        "retention.bytes",
        LONG,
        -1,
        "Segments are deleted while a partition exceeds this size; -1 for no limit.",
        None,
        ("log.retention.bytes",),
        log_field=True,
    ),
    _t(
        "retention.ms",
        LONG,
        604800000,
        "Segments older than this are deleted; -1 keeps them forever.",
        at_least(-1),
        ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
        log_field=True,
        broker_default=lambda config: config.log_retention_ms,
    ),
    _t(
        "segment.bytes",
        INT,
        1073741824,
        "A segment rolls when it reaches this size.",
        at_least(14),
        ("log.segment.bytes",),
        log_field=True,
    ),
    _t(
        "segment.index.bytes",
        INT,
        10485760,
        "Largest offset or time index; a full index rolls the segment.",
        at_least(MIN_INDEX_BYTES),
        ("log.index.size.max.bytes",),
        log_field=True,
    ),
    _t(
        "segment.ms",
        LONG,
        604800000,
        "A segment rolls when its first record is this old.",
        at_least(1),
        ("log.roll.ms", "log.roll.hours"),
        log_field=True,
        broker_default=lambda config: config.log_roll_ms,
    ),
    _t(
        "spate.compaction.planner",
        STRING,
        "broker",
        "Who plans the topic's compaction: broker (its log cleaner) or spark (the compaction job).",
        ValidString(COMPACTION_PLANNERS),
        ("spate.compaction.planner",),
        log_field=True,
    ),
    TopicConfigDef(
        definition=PropertyDef(
            name="spate.archive.path",
            type=STRING,
            default="",
            doc="The topic's Delta archive (a table path or URI; empty: none). Set, the archive job copies "
            "records there and retention deletes only segments already archived.",
            validator=ArchivePath(),
        ),
        broker_synonyms=(),
        broker_default=lambda config: "",  # one table per topic: no broker-wide default
        log_config_field="spate_archive_path",
    ),
    _t(
        "unclean.leader.election.enable",
        BOOLEAN,
        False,
        "Allow an out-of-sync replica to become leader, losing data.",
        None,
        ("unclean.leader.election.enable",),
    ),
)

TOPIC_CONFIGS: Mapping[str, TopicConfigDef] = MappingProxyType({d.name: d for d in _DEFINITIONS})
if len(TOPIC_CONFIGS) != len(_DEFINITIONS):
    raise RuntimeError("a topic config is declared twice")

# Keys of the dict that to_log_config_kwargs returns (storage's LogConfig fields).
LOG_CONFIG_FIELDS = tuple(d.log_config_field for d in _DEFINITIONS if d.log_config_field is not None)

_TOPIC_NAME_OF_BROKER_PROPERTY = {
    synonym: d.name for d in _DEFINITIONS for synonym in d.broker_synonyms if synonym != d.name
}


def validate_topic_configs(configs: Mapping[str, str | None]) -> dict[str, str]:
    """Check topic overrides (CreateTopics, AlterConfigs) and return them as canonical text.

    Raises :class:`ConfigError` naming the first bad key: unknown (with a
    suggestion), null, of the wrong type or out of range, or inconsistent
    with another config of the same topic.
    """
    canonical: dict[str, str] = {}
    parsed: dict[str, ConfigValue] = {}
    for key, text in configs.items():
        if is_ignored_topic_config(key):
            continue
        entry = TOPIC_CONFIGS.get(key)
        if entry is None:
            raise ConfigError(f"unknown topic config{_topic_suggestion(key)}", key=key, value=text)
        if text is None:
            raise ConfigError("a topic config value must not be null", key=key)
        try:
            value = entry.definition.parse(text)
        except InvalidValue as exc:
            expected = f"expected {entry.definition.expectation()}"
            message = f"{exc}; {expected}" if exc.specific else expected
            raise ConfigError(message, key=key, value=text) from None
        parsed[key] = value
        canonical[key] = render_value(value) or ""
    _check_compaction_lags(parsed, canonical)
    return canonical


def effective_topic_values(broker_config: BrokerConfig, topic_overrides: Mapping[str, str]) -> dict[str, ConfigValue]:
    """Every topic config's typed value: the override if present, else the broker's default."""
    overrides = _parse_overrides(topic_overrides)
    return {
        name: overrides[name] if name in overrides else entry.broker_default(broker_config)
        for name, entry in TOPIC_CONFIGS.items()
    }


def effective_topic_config(
    broker_config: BrokerConfig, topic_overrides: Mapping[str, str]
) -> dict[str, EffectiveValue]:
    """Every topic config's value as text and its source, for DescribeConfigs on a topic."""
    overrides = _parse_overrides(topic_overrides)
    result: dict[str, EffectiveValue] = {}
    for name, entry in TOPIC_CONFIGS.items():
        if name in overrides:
            result[name] = EffectiveValue(render_value(overrides[name]), ConfigSource.DYNAMIC_TOPIC_CONFIG)
        else:
            static = any(broker_config.is_set(synonym) for synonym in entry.broker_synonyms)
            source = ConfigSource.STATIC_BROKER_CONFIG if static else ConfigSource.DEFAULT_CONFIG
            result[name] = EffectiveValue(render_value(entry.broker_default(broker_config)), source)
    return result


def topic_config_synonyms(
    broker_config: BrokerConfig, topic_overrides: Mapping[str, str], name: str
) -> list[ConfigSynonym]:
    """The synonym list DescribeConfigs v1+ reports for one topic config, highest precedence first."""
    entry = TOPIC_CONFIGS.get(name)
    if entry is None:
        raise ConfigError(f"unknown topic config{_topic_suggestion(name)}", key=name)
    overrides = _parse_overrides(topic_overrides)
    synonyms: list[ConfigSynonym] = []
    if name in overrides:
        synonyms.append(ConfigSynonym(name, render_value(overrides[name]), ConfigSource.DYNAMIC_TOPIC_CONFIG))
    for synonym in entry.broker_synonyms:
        if broker_config.is_set(synonym):
            value = render_value(broker_config.get(synonym))
            synonyms.append(ConfigSynonym(synonym, value, ConfigSource.STATIC_BROKER_CONFIG))
    for synonym in entry.broker_synonyms:
        default = BROKER_PROPERTIES[synonym].default
        if default is not None:
            synonyms.append(ConfigSynonym(synonym, render_value(default), ConfigSource.DEFAULT_CONFIG))
    return synonyms


def to_log_config_kwargs(
    broker_config: BrokerConfig, topic_overrides: Mapping[str, str] | None = None
) -> dict[str, object]:
    """Keyword arguments for storage's ``LogConfig``: the topic's effective values.

    Keys are :data:`LOG_CONFIG_FIELDS` (snake_case of the topic config names).
    ``cleanup_policy`` is the comma-joined policy text (``"delete"``,
    ``"compact"`` or ``"compact,delete"``); every other value is an int or str.
    """
    values = effective_topic_values(broker_config, topic_overrides or {})
    kwargs: dict[str, object] = {}
    for entry in _DEFINITIONS:
        if entry.log_config_field is None:
            continue
        value = values[entry.name]
        kwargs[entry.log_config_field] = render_value(value) if isinstance(value, tuple) else value
    return kwargs


def _parse_overrides(topic_overrides: Mapping[str, str]) -> dict[str, ConfigValue]:
    canonical = validate_topic_configs(topic_overrides)
    return {key: TOPIC_CONFIGS[key].definition.parse(text) for key, text in canonical.items()}


def _check_compaction_lags(parsed: Mapping[str, ConfigValue], canonical: Mapping[str, str]) -> None:
    min_lag = parsed.get("min.compaction.lag.ms", TOPIC_CONFIGS["min.compaction.lag.ms"].definition.default)
    max_lag = parsed.get("max.compaction.lag.ms", TOPIC_CONFIGS["max.compaction.lag.ms"].definition.default)
    if isinstance(min_lag, int) and isinstance(max_lag, int) and min_lag > max_lag:
        key = "min.compaction.lag.ms" if "min.compaction.lag.ms" in canonical else "max.compaction.lag.ms"
        raise ConfigError(
            f"min.compaction.lag.ms ({min_lag}) exceeds max.compaction.lag.ms ({max_lag})",
            key=key,
            value=canonical[key],
        )


def _topic_suggestion(key: str) -> str:
    topic_name = _TOPIC_NAME_OF_BROKER_PROPERTY.get(key)
    if topic_name is not None:
        return f" ({key} is a broker property; the topic config is {topic_name!r})"
    matches = difflib.get_close_matches(key, list(TOPIC_CONFIGS), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""
