"""Topic-level configs: validation, effective values and sources, LogConfig mapping."""

from __future__ import annotations

import pytest

from broker_core.config import (
    LOG_CONFIG_FIELDS,
    TOPIC_CONFIGS,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    effective_topic_config,
    effective_topic_values,
    to_log_config_kwargs,
    topic_config_synonyms,
    validate_topic_configs,
)
from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.definitions import render_value

DEFAULTS = BrokerConfig.from_properties()


def test_validation_returns_canonical_text() -> None:
    assert validate_topic_configs(
        {
            "cleanup.policy": " compact , delete ",
            "retention.ms": " 86400000 ",
            "unclean.leader.election.enable": "TRUE",
            "min.cleanable.dirty.ratio": "0.25",
        }
    ) == {
        "cleanup.policy": "compact,delete",
        "retention.ms": "86400000",
        "unclean.leader.election.enable": "true",
        "min.cleanable.dirty.ratio": "0.25",
    }


def test_empty_configs_are_valid() -> None:
    assert validate_topic_configs({}) == {}


TOPIC_ERRORS = [
    ("retention.ms", "-2", "at least -1"),
    ("retention.ms", "soon", "expected a 64-bit integer"),
    ("segment.bytes", "10", "at least 14"),
    ("segment.ms", "0", "at least 1"),
    ("segment.index.bytes", "11", "at least 12"),
    ("flush.messages", "0", "at least 1"),
    ("max.message.bytes", "-1", "at least 0"),
    ("cleanup.policy", "archive", "element 'archive' is not allowed"),
    ("message.timestamp.type", "AppendTime", "one of CreateTime, LogAppendTime"),
    ("compression.type", "brotli", "one of"),
    ("min.insync.replicas", "0", "at least 1"),
    ("unclean.leader.election.enable", "1", "expected a boolean"),
    ("min.cleanable.dirty.ratio", "2", "between 0.0 and 1.0"),
]


@pytest.mark.parametrize("key, value, message", TOPIC_ERRORS)
def test_invalid_topic_values_name_key_and_value(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        validate_topic_configs({key: value})
    assert (info.value.key, info.value.value) == (key, value)
    assert info.value.error_code == 40


def test_unknown_topic_config_suggests_a_close_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'retention.bytes'") as info:
        validate_topic_configs({"retention.byte": "10"})
    assert info.value.key == "retention.byte"


def test_broker_property_used_as_topic_config_names_the_topic_config() -> None:
    with pytest.raises(ConfigError, match="the topic config is 'segment.bytes'"):
        validate_topic_configs({"log.segment.bytes": "1048576"})


def test_null_topic_config_value_is_rejected() -> None:
    with pytest.raises(ConfigError, match="must not be null"):
        validate_topic_configs({"retention.ms": None})


def test_min_compaction_lag_may_not_exceed_max() -> None:
    with pytest.raises(ConfigError, match="exceeds max.compaction.lag.ms") as info:
        validate_topic_configs({"min.compaction.lag.ms": "5000", "max.compaction.lag.ms": "1000"})
    assert info.value.key == "min.compaction.lag.ms"


@pytest.mark.parametrize("name", sorted(TOPIC_CONFIGS))
def test_broker_defaults_equal_topic_defaults(name: str) -> None:
    entry = TOPIC_CONFIGS[name]
    assert entry.broker_default(DEFAULTS) == entry.definition.default
    for synonym in entry.broker_synonyms:
        assert synonym in BROKER_PROPERTIES


def test_effective_config_sources_default_static_and_topic() -> None:
    broker = BrokerConfig.from_properties({"log.retention.hours": "24", "message.max.bytes": "2000000"})
    effective = effective_topic_config(broker, {"segment.bytes": "1048576"})
    assert effective["segment.bytes"] == ("1048576", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert effective["retention.ms"] == ("86400000", ConfigSource.STATIC_BROKER_CONFIG)
    assert effective["max.message.bytes"] == ("2000000", ConfigSource.STATIC_BROKER_CONFIG)
    assert effective["cleanup.policy"] == ("delete", ConfigSource.DEFAULT_CONFIG)
    assert effective["segment.ms"] == ("604800000", ConfigSource.DEFAULT_CONFIG)
    assert set(effective) == set(TOPIC_CONFIGS)


RETENTION_SOURCES = [
    ({}, {}, "604800000", ConfigSource.DEFAULT_CONFIG),
    ({"log.retention.hours": "1"}, {}, "3600000", ConfigSource.STATIC_BROKER_CONFIG),
    ({"log.retention.minutes": "2", "log.retention.hours": "1"}, {}, "120000", ConfigSource.STATIC_BROKER_CONFIG),
    ({"log.retention.ms": "-1"}, {}, "-1", ConfigSource.STATIC_BROKER_CONFIG),
    ({"log.retention.ms": "500"}, {"retention.ms": "-1"}, "-1", ConfigSource.DYNAMIC_TOPIC_CONFIG),
]


@pytest.mark.parametrize("broker_props, overrides, value, source", RETENTION_SOURCES)
def test_retention_ms_follows_broker_precedence_unless_the_topic_overrides(
    broker_props: dict[str, str], overrides: dict[str, str], value: str, source: ConfigSource
) -> None:
    broker = BrokerConfig.from_properties(broker_props)
    assert effective_topic_config(broker, overrides)["retention.ms"] == (value, source)


def test_effective_config_rejects_invalid_stored_overrides() -> None:
    with pytest.raises(ConfigError):
        effective_topic_config(DEFAULTS, {"retention.ms": "x"})


def test_effective_values_are_typed() -> None:
    values = effective_topic_values(DEFAULTS, {"cleanup.policy": "compact", "preallocate": "true"})
    assert values["cleanup.policy"] == ("compact",)
    assert values["preallocate"] is True
    assert values["min.insync.replicas"] == 1


def test_synonyms_list_topic_override_then_static_then_defaults() -> None:
    broker = BrokerConfig.from_properties({"log.retention.hours": "24"})
    synonyms = topic_config_synonyms(broker, {"retention.ms": "1000"}, "retention.ms")
    assert [(s.name, s.value, s.source) for s in synonyms] == [
        ("retention.ms", "1000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]


def test_log_config_kwargs_have_storage_field_names_and_typed_values() -> None:
    kwargs = to_log_config_kwargs(DEFAULTS)
    assert tuple(kwargs) == LOG_CONFIG_FIELDS
    assert kwargs == {
        "cleanup_policy": "delete",
        "delete_retention_ms": 86400000,
        "max_compaction_lag_ms": 2**63 - 1,
        "min_cleanable_dirty_ratio": 0.5,
        "min_compaction_lag_ms": 0,
        "spate_compaction_planner": "broker",
        "spate_archive_path": "",
        "file_delete_delay_ms": 60000,
        "flush_messages": 2**63 - 1,
        "flush_ms": 2**63 - 1,
        "index_interval_bytes": 4096,
        "max_message_bytes": 1048588,
        "message_downconversion_enable": True,
        "message_timestamp_type": "CreateTime",
        "preallocate": False,
        "message_timestamp_difference_max_ms": 2**63 - 1,
        "message_timestamp_before_max_ms": 2**63 - 1,
        "message_timestamp_after_max_ms": 2**63 - 1,
        "retention_bytes": -1,
        "retention_ms": 604800000,
        "segment_bytes": 1073741824,
        "segment_index_bytes": 10485760,
        "segment_ms": 604800000,
    }


def test_log_config_kwargs_layer_topic_overrides_on_broker_settings() -> None:
    broker = BrokerConfig.from_properties(
        {"log.segment.bytes": "2048", "log.roll.ms": "999", "log.flush.interval.messages": "1"}
    )
    kwargs = to_log_config_kwargs(broker, {"segment.bytes": "4096", "cleanup.policy": "delete,compact"})
    assert kwargs["segment_bytes"] == 4096
    assert kwargs["segment_ms"] == 999
    assert kwargs["flush_messages"] == 1
    assert kwargs["cleanup_policy"] == "delete,compact"


@pytest.mark.parametrize(
    "overrides",
    [{}, {"segment.bytes": "14", "segment.index.bytes": "12", "cleanup.policy": "compact,delete", "retention.ms": "-1"}],
)
def test_log_config_kwargs_build_a_storage_log_config(overrides: dict[str, str]) -> None:
    from broker_core.storage.config import LogConfig

    kwargs = to_log_config_kwargs(DEFAULTS, validate_topic_configs(overrides))
    assert LogConfig(**kwargs).to_topic_configs() == {
        name.replace("_", "."): str(value) for name, value in kwargs.items()
    }


@pytest.mark.parametrize("name", sorted(TOPIC_CONFIGS))
def test_every_topic_default_renders_and_parses_back(name: str) -> None:
    definition = TOPIC_CONFIGS[name].definition
    assert definition.parse(render_value(definition.default) or "") == definition.default
