"""``kafka-configs.sh`` against a broker process: describe and alter topic configs in Kafka's words."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_alter_then_describe_shows_the_dynamic_configs(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    altered = kafka_tool("kafka-configs.sh", "--entity-type", "topics", "--entity-name", topic, "--alter",
                         "--add-config", "max.message.bytes=2000,cleanup.policy=[compact,delete]")
    assert altered.returncode == 0, altered
    assert altered.stdout == f"Completed updating config for topic {topic}.\n"
    described = kafka_tool("kafka-configs.sh", "--entity-type", "topics", "--entity-name", topic, "--describe")
    assert described.returncode == 0, described
    lines = described.stdout.splitlines()
    assert lines[0] == f"Dynamic configs for topic {topic} are:"
    assert lines[1].startswith("  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:")
    assert lines[2].startswith("  max.message.bytes=2000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:")
    assert len(lines) == 3


def test_delete_config_returns_a_config_to_its_default(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--config", "retention.ms=1000")
    deleted = kafka_tool("kafka-configs.sh", "--topic", topic, "--alter", "--delete-config", "retention.ms")
    assert deleted.returncode == 0, deleted
    described = kafka_tool("kafka-configs.sh", "--topic", topic, "--describe")
    assert described.stdout.splitlines() == [f"Dynamic configs for topic {topic} are:"]


def test_describe_all_lists_defaults_too(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    described = kafka_tool("kafka-configs.sh", "--topic", topic, "--describe", "--all")
    assert described.stdout.splitlines()[0] == f"All configs for topic {topic} are:"
    assert any(line.startswith("  retention.ms=604800000 ") for line in described.stdout.splitlines())


def test_a_refused_config_fails_with_the_brokers_reason(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    refused = kafka_tool("kafka-configs.sh", "--topic", topic, "--alter", "--add-config", "retention.mz=1")
    assert refused.returncode == 1
    assert "retention.mz" in refused.stderr


def test_entity_types_spate_does_not_keep_are_refused_by_name(kafka_tool) -> None:
    refused = kafka_tool("kafka-configs.sh", "--entity-type", "users", "--entity-name", "alice", "--describe")
    assert refused.returncode == 1
    assert "--entity-type users is not supported" in refused.stderr


def test_the_deprecated_message_format_version_is_accepted_and_ignored(kafka_tool, topic) -> None:
    # Kafka 3.x accepts it and ignores it (every batch is v2); old scripts and clients still set it.
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    altered = kafka_tool("kafka-configs.sh", "--topic", topic, "--alter", "--add-config",
                         "message.format.version=0.10.0.0")
    assert altered.returncode == 0, altered
    described = kafka_tool("kafka-configs.sh", "--topic", topic, "--describe")
    assert described.returncode == 0, described
    assert "message.format.version" not in described.stdout