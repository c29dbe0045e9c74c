"""``kafka-consumer-groups.sh`` against a broker process: list, describe (Kafka's columns), reset, delete."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

DESCRIBE_HEADER = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                   "CLIENT-ID"]


@pytest.fixture
def consumed(kafka_tool, topic, group) -> str:
    """A topic of 5 records, of which ``group`` consumed and committed 3 (the group has no members now)."""
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    kafka_tool("kafka-console-producer.sh", "--topic", topic, stdin=b"1\n2\n3\n4\n5\n")
    read = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--group", group, "--from-beginning",
                      "--max-messages", "3", "--timeout-ms", "30000")
    assert read.stdout.splitlines() == ["1", "2", "3"], read
    return topic


def test_list_prints_one_group_per_line(kafka_tool, consumed, group) -> None:
    listed = kafka_tool("kafka-consumer-groups.sh", "--list")
    assert listed.returncode == 0, listed
    assert group in listed.stdout.splitlines()


def test_describe_prints_kafkas_columns_with_offsets_and_lag(kafka_tool, consumed, group) -> None:
    described = kafka_tool("kafka-consumer-groups.sh", "--describe", "--group", group)
    assert described.returncode == 0, described
    lines = described.stdout.splitlines()
    assert lines[0] == ""
    assert lines[1].split() == DESCRIBE_HEADER
    assert lines[2].split() == [group, consumed, "0", "3", "5", "2", "-", "-", "-"]
    assert f"Consumer group '{group}' has no active members." in described.stderr


def test_reset_offsets_is_a_dry_run_until_execute(kafka_tool, consumed, group) -> None:
    planned = kafka_tool("kafka-consumer-groups.sh", "--reset-offsets", "--group", group, "--topic", consumed,
                         "--to-earliest", "--dry-run")
    assert planned.returncode == 0, planned
    assert planned.stdout.splitlines()[1].split() == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    assert planned.stdout.splitlines()[2].split() == [group, consumed, "0", "0"]
    described = kafka_tool("kafka-consumer-groups.sh", "--describe", "--group", group)
    assert described.stdout.splitlines()[2].split()[3] == "3"

    executed = kafka_tool("kafka-consumer-groups.sh", "--reset-offsets", "--group", group, "--all-topics",
                          "--to-offset", "1", "--execute")
    assert executed.returncode == 0, executed
    described = kafka_tool("kafka-consumer-groups.sh", "--describe", "--group", group)
    assert described.stdout.splitlines()[2].split()[3:6] == ["1", "5", "4"]


def test_delete_removes_the_group(kafka_tool, consumed, group) -> None:
    deleted = kafka_tool("kafka-consumer-groups.sh", "--delete", "--group", group)
    assert deleted.returncode == 0, deleted
    assert deleted.stdout == f"Deletion of requested consumer groups ('{group}') was successful.\n"
    assert group not in kafka_tool("kafka-consumer-groups.sh", "--list").stdout.splitlines()


def test_describing_an_unknown_group_fails(kafka_tool, group) -> None:
    described = kafka_tool("kafka-consumer-groups.sh", "--describe", "--group", group)
    assert described.returncode == 1
    assert f"Consumer group '{group}' does not exist." in described.stderr
