"""``kafka-topics.sh`` against a broker process: Kafka's flags in, Kafka's output out."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_create_then_list_prints_one_name_per_line(kafka_tool, topic) -> None:
    created = kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--partitions", "3",
                         "--replication-factor", "1")
    assert created.returncode == 0, created
    assert created.stdout == f"Created topic {topic}.\n"
    listed = kafka_tool("kafka-topics.sh", "--list")
    assert listed.returncode == 0, listed
    assert topic in listed.stdout.splitlines()
    assert "__consumer_offsets" not in kafka_tool("kafka-topics.sh", "--list", "--exclude-internal").stdout


def test_describe_prints_kafkas_topic_and_partition_lines(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--partitions", "2", "--config", "retention.ms=123456")
    described = kafka_tool("kafka-topics.sh", "--describe", "--topic", topic)
    assert described.returncode == 0, described
    lines = described.stdout.splitlines()
    assert lines[0] == f"Topic: {topic}\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: retention.ms=123456"
    assert lines[1:] == [
        f"\tTopic: {topic}\tPartition: {p}\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A"
        for p in (0, 1)
    ]


def test_topic_is_a_regular_expression_except_for_create(kafka_tool, topic) -> None:
    for suffix in ("a", "b"):
        kafka_tool("kafka-topics.sh", "--create", "--topic", f"{topic}-{suffix}")
    listed = kafka_tool("kafka-topics.sh", "--list", "--topic", f"{topic}-.*")
    assert listed.stdout.splitlines() == [f"{topic}-a", f"{topic}-b"]


def test_alter_adds_partitions(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--partitions", "1")
    altered = kafka_tool("kafka-topics.sh", "--alter", "--topic", topic, "--partitions", "4")
    assert altered.returncode == 0, altered
    assert "PartitionCount: 4" in kafka_tool("kafka-topics.sh", "--describe", "--topic", topic).stdout


def test_delete_removes_the_topic(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    deleted = kafka_tool("kafka-topics.sh", "--delete", "--topic", topic)
    assert deleted.returncode == 0, deleted
    assert topic not in kafka_tool("kafka-topics.sh", "--list").stdout.splitlines()


def test_if_not_exists_and_if_exists_make_the_command_idempotent(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    again = kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--if-not-exists").returncode == 0
    missing = kafka_tool("kafka-topics.sh", "--delete", "--topic", f"{topic}-missing")
    assert missing.returncode == 1
    assert f"Topic '{topic}-missing' does not exist as expected" in missing.stderr
    assert kafka_tool("kafka-topics.sh", "--delete", "--topic", f"{topic}-missing", "--if-exists").returncode == 0


def test_replica_assignment_places_each_partition(kafka_tool, topic) -> None:
    created = kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--replica-assignment", "0,0")
    assert created.returncode == 0, created
    assert "PartitionCount: 2" in kafka_tool("kafka-topics.sh", "--describe", "--topic", topic).stdout


@pytest.mark.parametrize("args, fragment", [
    (("--list", "--partitionz", "3"), "--partitionz is not a recognized option"),
    (("--list", "--describe"), "exactly one action"),
    (("--create",), "Missing required argument \"[topic]\""),
    (("--alter", "--topic", "t", "--config", "a=b"), "--config can only be used with --create"),
])
def test_a_bad_command_line_fails_naming_the_problem(kafka_tool, args, fragment) -> None:
    result = kafka_tool("kafka-topics.sh", *args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert fragment in result.stderr, result.stderr
