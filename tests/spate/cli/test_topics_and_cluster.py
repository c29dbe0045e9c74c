"""``spate cluster describe`` and ``spate topics ...`` against a real broker."""

from __future__ import annotations

import re

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate

pytestmark = pytest.mark.integration


def table_row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in output.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


def test_cluster_describe_shows_cluster_id_controller_brokers_and_topic_count(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    result = spate("cluster", "describe", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert re.search(r"Cluster id: \S+", result.stdout)
    host, port = bootstrap.split(":")
    assert f"Controller: 0 ({bootstrap})" in result.stdout
    assert table_row(result.stdout, "0") == ["0", host, port, "yes"]
    assert int(re.search(r"Topics: (\d+)", result.stdout).group(1)) >= 1


def test_topics_create_then_list_shows_the_topic(bootstrap, topic_name) -> None:
    created = spate("topics", "create", topic_name, "--partitions", "3", "--replication-factor", "1",
                    bootstrap=bootstrap)
    assert created.returncode == 0, created
    assert f"Created topic {topic_name}" in created.stdout
    listed = spate("topics", "list", bootstrap=bootstrap)
    assert listed.returncode == 0
    assert topic_name in listed.stdout.splitlines()


def test_topics_describe_shows_partitions_offsets_and_overridden_configs(bootstrap, topic_name, make_topic) -> None:
    make_topic(2, configs={"retention.ms": "123456"})
    spate("produce", topic_name, "--partition", "1", bootstrap=bootstrap, stdin=b"a\nb\nc\n")
    result = spate("topics", "describe", topic_name, bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert f"Topic: {topic_name}  Partitions: 2  Replication factor: 1" in result.stdout
    assert table_row(result.stdout, "0") == ["0", "0", "0", "0", "0", "0"]
    assert table_row(result.stdout, "1") == ["1", "0", "0", "0", "0", "3"]
    assert table_row(result.stdout, "retention.ms") == ["retention.ms", "123456", "DYNAMIC_TOPIC_CONFIG"]
    assert "cleanup.policy" not in result.stdout  # defaults are left out


def test_topics_alter_config_adds_a_config_and_keeps_existing_overrides(bootstrap, topic_name, make_topic) -> None:
    make_topic(1, configs={"retention.ms": "123456"})
    altered = spate("topics", "alter-config", topic_name, "--config", "cleanup.policy=compact", bootstrap=bootstrap)
    assert altered.returncode == 0, altered
    described = spate("topics", "describe", topic_name, bootstrap=bootstrap).stdout
    assert table_row(described, "cleanup.policy")[1] == "compact"
    assert table_row(described, "retention.ms")[1] == "123456"


def test_topics_alter_config_delete_config_returns_it_to_the_default(bootstrap, topic_name, make_topic) -> None:
    make_topic(configs={"retention.ms": "123456"})
    altered = spate("topics", "alter-config", topic_name, "--delete-config", "retention.ms", bootstrap=bootstrap)
    assert altered.returncode == 0, altered
    assert "retention.ms" not in spate("topics", "describe", topic_name, bootstrap=bootstrap).stdout


def test_topics_add_partitions_grows_the_topic(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    grown = spate("topics", "add-partitions", topic_name, "--partitions", "3", bootstrap=bootstrap)
    assert grown.returncode == 0, grown
    assert "Partitions: 3" in spate("topics", "describe", topic_name, bootstrap=bootstrap).stdout


def test_topics_delete_removes_the_topic(bootstrap, topic_name, make_topic) -> None:
    make_topic()
    deleted = spate("topics", "delete", topic_name, bootstrap=bootstrap)
    assert deleted.returncode == 0, deleted
    assert topic_name not in spate("topics", "list", bootstrap=bootstrap).stdout.splitlines()


# --- bad input ----------------------------------------------------------------------------------


def test_describe_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    result = spate("topics", "describe", "no-such-topic", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "'no-such-topic' does not exist")


def test_delete_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    assert_one_line_failure(spate("topics", "delete", "no-such-topic", bootstrap=bootstrap), 1, "does not exist")


def test_creating_an_existing_topic_fails_with_one_line(bootstrap, topic_name, make_topic) -> None:
    make_topic()
    assert_one_line_failure(spate("topics", "create", topic_name, bootstrap=bootstrap), 1, "already exists")


def test_unknown_config_key_fails_with_one_line(bootstrap, topic_name, make_topic) -> None:
    make_topic()
    result = spate("topics", "alter-config", topic_name, "--config", "no.such.config=1", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "INVALID_CONFIG", "no.such.config")


def test_create_with_an_unknown_config_key_fails_with_one_line(bootstrap, topic_name) -> None:
    result = spate("topics", "create", topic_name, "--config", "no.such.config=1", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "no.such.config")


def test_add_partitions_that_does_not_grow_the_topic_fails(bootstrap, topic_name, make_topic) -> None:
    make_topic(2)
    result = spate("topics", "add-partitions", topic_name, "--partitions", "2", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "already has 2 partitions")


@pytest.mark.parametrize("value", ["zero", "0", "-3", "1.5"])
def test_an_invalid_partition_count_is_a_usage_error(bootstrap, value) -> None:
    result = spate("topics", "create", "x", "--partitions", value, bootstrap=bootstrap)
    assert_one_line_failure(result, 2, "--partitions")


def test_a_malformed_config_pair_is_a_usage_error(bootstrap) -> None:
    assert_one_line_failure(spate("topics", "create", "x", "--config", "novalue", bootstrap=bootstrap), 2, "KEY=VALUE")


def test_an_unreachable_broker_fails_within_the_api_timeout(refused_address) -> None:
    result = spate("topics", "list", "--bootstrap-server", refused_address, "--api-timeout-ms", "500")
    assert_one_line_failure(result, 1, refused_address)


def test_cluster_describe_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("cluster", "describe", "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1, refused_address)


def test_a_malformed_bootstrap_address_is_a_usage_error() -> None:
    assert_one_line_failure(spate("topics", "list", "--bootstrap-server", "nohostport"), 2, "nohostport")
