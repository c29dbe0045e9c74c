"""``spate cluster describe`` against a real broker, and against a scripted cluster of several brokers."""

from __future__ import annotations

import re

import pytest

from spate.protocol import ApiKey
from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines, table_row
from tests.spate.client.admin.fake_cluster import FakeCluster, FakePartition, describe_cluster_response, without


@pytest.mark.integration
def test_cluster_describe_shows_cluster_id_controller_brokers_and_topic_count(bootstrap, make_topic) -> None:
    topic = make_topic(2)
    result = spate("cluster", "describe", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert re.search(r"Cluster id: \S+", result.stdout)
    assert f"Controller: 0 ({bootstrap})" in result.stdout
    assert "Controller epoch: unknown" in result.stdout
    assert table_row(result.stdout, "0") == ["0", bootstrap, "yes", "yes"]  # broker, address, alive, controller
    assert int(re.search(r"Topics: (\d+)", result.stdout).group(1)) >= 1
    assert table_row(result.stdout, topic) == [topic, "2", "0: 2"]


@pytest.mark.integration
def test_cluster_describe_as_json(bootstrap, make_topic) -> None:
    topic = make_topic(3)
    result = spate("cluster", "describe", "--output", "json", bootstrap=bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    host, port = bootstrap.split(":")
    assert document["controller"] == {"id": 0, "host": host, "port": int(port), "rack": None}
    assert document["controller_epoch"] is None
    assert document["brokers"] == [{"id": 0, "host": host, "port": int(port), "rack": None, "alive": True}]
    [described] = [t for t in document["topics"] if t["name"] == topic]
    assert described == {"name": topic, "internal": False, "partitions": 3, "leaders": {"0": 3}, "leaderless": 0}


@pytest.mark.integration
def test_cluster_describe_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("cluster", "describe", "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1, refused_address)


# --- a cluster of several brokers (scripted) ------------------------------------------------------


def test_cluster_describe_lists_every_broker_with_rack_and_the_controller(fake_cluster) -> None:
    result = spate("cluster", "describe", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    address = fake_cluster.bootstrap
    assert f"Controller: 1 ({address})" in result.stdout
    assert table_row(result.stdout, "0") == ["0", address, "rack-a", "yes"]
    assert table_row(result.stdout, "1") == ["1", address, "yes", "yes"]
    assert table_row(result.stdout, "2") == ["2", address, "yes"]
    assert table_row(result.stdout, "orders") == ["orders", "3", "0: 1, 1: 1, 2: 1"]
    assert "Topics: 1" in result.stdout


def test_cluster_describe_uses_describe_cluster_where_served(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.DESCRIBE_CLUSTER] = lambda version, body: describe_cluster_response(
        {0: ("127.0.0.1", fake_cluster.port, "r0"), 1: ("127.0.0.1", fake_cluster.port, "r1")}, controller=0,
        cluster_id="from-describe-cluster",
    )
    result = spate("cluster", "describe", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert "Cluster id: from-describe-cluster" in result.stdout
    assert table_row(result.stdout, "1")[2:] == ["r1", "yes"]
    assert len(fake_cluster.sent(ApiKey.DESCRIBE_CLUSTER)) == 1


def test_brokers_named_by_replicas_but_not_listed_are_shown_as_not_alive(fake_cluster) -> None:
    fake_cluster.brokers = (0, 1)
    fake_cluster.topics["orders"][2] = FakePartition(-1, (2,), isr=(), offline=(2,))
    result = spate("cluster", "describe", "--output", "json", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    assert [(b["id"], b["alive"]) for b in document["brokers"]] == [(0, True), (1, True), (2, False)]
    assert document["brokers"][2]["host"] is None
    assert document["topics"] == [
        {"name": "orders", "internal": False, "partitions": 3, "leaders": {"0": 1, "1": 1}, "leaderless": 1}
    ]
    table = spate("cluster", "describe", bootstrap=fake_cluster.bootstrap)
    assert table_row(table.stdout, "2") == ["2", "-", "no"]
    assert table_row(table.stdout, "orders") == ["orders", "3", "0: 1, 1: 1", "1"]


def test_internal_topics_are_marked_and_not_counted_as_topics() -> None:
    topics = {"__consumer_offsets": [FakePartition(0, (0,))], "a": [FakePartition(0, (0,))]}
    with FakeCluster(topics=topics, internal=frozenset({"__consumer_offsets"}),
                     versions=without(ApiKey.DESCRIBE_CLUSTER)) as fake:
        result = spate("cluster", "describe", bootstrap=fake.bootstrap)
    assert result.returncode == 0, result
    assert "Topics: 1" in result.stdout
    assert table_row(result.stdout, "__consumer_offsets (internal)") == ["__consumer_offsets (internal)", "1", "0: 1"]
