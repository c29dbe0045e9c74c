"""LogConfig: Kafka's topic-level names, defaults and bounds."""

from __future__ import annotations

import pytest

from broker_core.storage.config import KAFKA_NAMES, LONG_MAX, LogConfig
from broker_core.storage.errors import LogConfigError


def test_defaults_are_kafkas():
    config = LogConfig()
    assert config.segment_bytes == 1024**3
    assert config.segment_ms == config.retention_ms == 604_800_000
    assert config.retention_bytes == -1
    assert config.index_interval_bytes == 4096
    assert config.segment_index_bytes == 10 * 1024**2
    assert config.flush_messages == config.flush_ms == LONG_MAX
    assert config.file_delete_delay_ms == 60_000
    assert config.max_message_bytes == 1_048_588
    assert config.message_timestamp_type == "CreateTime"
    assert config.cleanup_policy == "delete"


def test_every_field_has_its_kafka_topic_config_name():
    assert KAFKA_NAMES["segment.bytes"] == "segment_bytes"
    assert KAFKA_NAMES["segment.index.bytes"] == "segment_index_bytes"
    assert KAFKA_NAMES["file.delete.delay.ms"] == "file_delete_delay_ms"
    assert KAFKA_NAMES["message.timestamp.type"] == "message_timestamp_type"
    assert KAFKA_NAMES["spate.archive.path"] == "spate_archive_path"
    assert KAFKA_NAMES["message.downconversion.enable"] == "message_downconversion_enable"
    assert KAFKA_NAMES["message.timestamp.before.max.ms"] == "message_timestamp_before_max_ms"
    assert KAFKA_NAMES["preallocate"] == "preallocate"
    assert len(KAFKA_NAMES) == 23


def test_from_topic_configs_parses_kafka_named_text_and_ignores_other_names():
    config = LogConfig.from_topic_configs(
        {"segment.bytes": "1048576", "retention.ms": -1, "cleanup.policy": ["compact", "delete"], "min.insync.replicas": "2"}
    )
    assert config.segment_bytes == 1_048_576
    assert config.retention_ms == -1
    assert config.compact_enabled and config.delete_enabled


def test_to_topic_configs_round_trips():
    config = LogConfig(segment_bytes=5_000, message_timestamp_type="LogAppendTime", message_downconversion_enable=False)
    assert LogConfig.from_topic_configs(config.to_topic_configs()) == config
    assert config.log_append_time


@pytest.mark.parametrize("value", ["true", "True", " false ", True, False])
def test_message_downconversion_enable_reads_booleans_and_their_text(value):
    expected = str(value).strip().lower() == "true"
    assert LogConfig.from_topic_configs({"message.downconversion.enable": value}).message_downconversion_enable is expected


@pytest.mark.parametrize("value", ["yes", "1", 1])
def test_message_downconversion_enable_refuses_anything_else(value):
    with pytest.raises(LogConfigError, match="message.downconversion.enable"):
        LogConfig.from_topic_configs({"message.downconversion.enable": value})


def test_the_broker_config_layer_produces_exactly_these_fields():
    from broker_core.config.topic_config import LOG_CONFIG_FIELDS

    assert set(LOG_CONFIG_FIELDS) == set(KAFKA_NAMES.values())


@pytest.mark.parametrize(
    "changes, name",
    [
        ({"segment_bytes": 10}, "segment.bytes"),
        ({"retention_ms": -2}, "retention.ms"),
        ({"segment_index_bytes": 8}, "segment.index.bytes"),
        ({"flush_messages": 0}, "flush.messages"),
        ({"message_timestamp_type": "BrokerTime"}, "message.timestamp.type"),
        ({"cleanup_policy": "shred"}, "cleanup.policy"),
        ({"index_interval_bytes": "4096"}, "index.interval.bytes"),
    ],
)
def test_out_of_range_values_raise_a_typed_error_naming_the_config(changes, name):
    with pytest.raises(LogConfigError, match=name):
        LogConfig(**changes)


def test_non_numeric_text_for_a_number_is_refused():
    with pytest.raises(LogConfigError, match="segment.ms"):
        LogConfig.from_topic_configs({"segment.ms": "soon"})


def test_a_compacted_log_rolls_by_max_compaction_lag_when_that_comes_before_segment_ms():
    assert LogConfig(cleanup_policy="compact", segment_ms=10_000, max_compaction_lag_ms=3_000).max_segment_ms == 3_000
    assert LogConfig(cleanup_policy="delete", segment_ms=10_000, max_compaction_lag_ms=3_000).max_segment_ms == 10_000
    assert LogConfig(cleanup_policy="compact", segment_ms=10_000).max_segment_ms == 10_000


def test_compaction_settings_are_checked_with_their_kafka_names():
    with pytest.raises(LogConfigError, match="min.cleanable.dirty.ratio"):
        LogConfig(min_cleanable_dirty_ratio=1.5)
    with pytest.raises(LogConfigError, match="spate.compaction.planner"):
        LogConfig(spate_compaction_planner="cron")
    assert LogConfig.from_topic_configs({"min.cleanable.dirty.ratio": "0.25"}).min_cleanable_dirty_ratio == 0.25
