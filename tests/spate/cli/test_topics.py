"""``spate topics create|list|describe|alter-config|add-partitions|delete`` against a real broker."""

from __future__ import annotations

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines, table_row

pytestmark = pytest.mark.integration


def test_topics_create_then_list_shows_the_topic(bootstrap, topic) -> None:
    created = spate("topics", "create", topic, "--partitions", "3", "--replication-factor", "1",
                    bootstrap=bootstrap)
    assert created.returncode == 0, created
    assert f"Created topic {topic}" in created.stdout
    listed = spate("topics", "list", bootstrap=bootstrap)
    assert listed.returncode == 0
    assert topic in listed.stdout.splitlines()


def test_topics_describe_shows_partitions_offsets_and_overridden_configs(bootstrap, topic, make_topic) -> None:
    make_topic(2, configs={"retention.ms": "123456"})
    spate("produce", topic, "--partition", "1", bootstrap=bootstrap, stdin=b"a\nb\nc\n")
    result = spate("topics", "describe", topic, bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert f"Topic: {topic}  Partitions: 2  Replication factor: 1" in result.stdout
    assert table_row(result.stdout, "0") == ["0", "0", "0", "0", "0", "0", "0"]
    partition_1 = table_row(result.stdout, "1")
    assert partition_1[:6] == ["1", "0", "0", "0", "0", "3"]
    assert int(partition_1[6]) > 61  # a record batch (its header alone takes 61 bytes) on the leader's disk
    assert f"Size on disk: {partition_1[6]} bytes" in result.stdout
    assert table_row(result.stdout, "retention.ms") == ["retention.ms", "123456", "DYNAMIC_TOPIC_CONFIG"]
    assert "cleanup.policy" not in result.stdout  # defaults are left out


def test_topics_describe_as_json(bootstrap, topic, make_topic) -> None:
    make_topic(2, configs={"retention.ms": "123456"})
    spate("produce", topic, "--partition", "1", bootstrap=bootstrap, stdin=b"a\nb\n")
    result = spate("topics", "describe", topic, "--output", "json", bootstrap=bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    assert [(p["partition"], p["leader"], p["replicas"], p["isr"], p["offline_replicas"], p["log_end_offset"])
            for p in document["partitions"]] == [(0, 0, [0], [0], [], 0), (1, 0, [0], [0], [], 2)]
    assert document["partitions"][0]["size_bytes"] == 0
    assert document["size_bytes"] == document["partitions"][1]["size_bytes"] > 0
    assert document["configs"]["retention.ms"]["value"] == "123456"


def test_topics_alter_config_adds_a_config_and_keeps_existing_overrides(bootstrap, topic, make_topic) -> None:
    make_topic(1, configs={"retention.ms": "123456"})
    altered = spate("topics", "alter-config", topic, "--config", "cleanup.policy=compact", bootstrap=bootstrap)
    assert altered.returncode == 0, altered
    described = spate("topics", "describe", topic, bootstrap=bootstrap).stdout
    assert table_row(described, "cleanup.policy")[1] == "compact"
    assert table_row(described, "retention.ms")[1] == "123456"


def test_topics_alter_config_delete_config_returns_it_to_the_default(bootstrap, topic, make_topic) -> None:
    make_topic(configs={"retention.ms": "123456"})
    altered = spate("topics", "alter-config", topic, "--delete-config", "retention.ms", bootstrap=bootstrap)
    assert altered.returncode == 0, altered
    assert "retention.ms" not in spate("topics", "describe", topic, bootstrap=bootstrap).stdout


def test_topics_add_partitions_grows_the_topic(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    grown = spate("topics", "add-partitions", topic, "--partitions", "3", bootstrap=bootstrap)
    assert grown.returncode == 0, grown
    assert "Partitions: 3" in spate("topics", "describe", topic, bootstrap=bootstrap).stdout


def test_topics_delete_removes_the_topic(bootstrap, topic, make_topic) -> None:
    make_topic()
    deleted = spate("topics", "delete", topic, bootstrap=bootstrap)
    assert deleted.returncode == 0, deleted
    assert topic not in spate("topics", "list", bootstrap=bootstrap).stdout.splitlines()


# --- bad input ----------------------------------------------------------------------------------


def test_describe_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    result = spate("topics", "describe", "no-such-topic", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "'no-such-topic' does not exist")


def test_delete_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    assert_one_line_failure(spate("topics", "delete", "no-such-topic", bootstrap=bootstrap), 1, "does not exist")


def test_creating_an_existing_topic_fails_with_one_line(bootstrap, topic, make_topic) -> None:
    make_topic()
    assert_one_line_failure(spate("topics", "create", topic, bootstrap=bootstrap), 1, "already exists")


def test_unknown_config_key_fails_with_one_line(bootstrap, topic, make_topic) -> None:
    make_topic()
    result = spate("topics", "alter-config", topic, "--config", "no.such.config=1", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "INVALID_CONFIG", "no.such.config")


def test_create_with_an_unknown_config_key_fails_with_one_line(bootstrap, topic) -> None:
    result = spate("topics", "create", topic, "--config", "no.such.config=1", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "no.such.config")


def test_add_partitions_that_does_not_grow_the_topic_fails(bootstrap, topic, make_topic) -> None:
    make_topic(2)
    result = spate("topics", "add-partitions", topic, "--partitions", "2", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "already has 2 partitions")


@pytest.mark.parametrize("value", ["zero", "0", "-3", "1.5"])
def test_an_invalid_partition_count_is_a_usage_error(bootstrap, value) -> None:
    result = spate("topics", "create", "x", "--partitions", value, bootstrap=bootstrap)
    assert_one_line_failure(result, 2, "--partitions")


def test_a_malformed_config_pair_is_a_usage_error(bootstrap) -> None:
    assert_one_line_failure(spate("topics", "create", "x", "--config", "novalue", bootstrap=bootstrap), 2, "KEY=VALUE")
