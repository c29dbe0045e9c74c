"""``spate topics describe`` and ``alter-config`` against a scripted cluster of several brokers.

Offline replicas, and which config API ``alter-config`` uses: IncrementalAlterConfigs
where the brokers serve it, else AlterConfigs over the topic's current overrides.
"""

from __future__ import annotations

from typing import Any

from spate.protocol import ApiKey
from spate.protocol.messages.describe_log_dirs import DescribeLogDirsResponse
from tests.spate.cli.conftest import spate
from tests.spate.cli.output import json_lines, table_row
from tests.spate.client.admin.fake_cluster import (
    FakeCluster,
    FakePartition,
    alter_configs_response,
    config_change_response,
    configs_response,
    offsets_response,
    without,
)


def sizes_response(body: Any, size: int) -> Any:
    """DescribeLogDirs: every partition asked is ``size`` bytes in the broker's one log dir."""
    R = DescribeLogDirsResponse
    return R(throttle_time_ms=0, error_code=0, results=[R.DescribeLogDirsResult(
        error_code=0, log_dir="/data", total_bytes=-1, usable_bytes=-1, topics=[
            R.DescribeLogDirsTopic(name=t.topic, partitions=[
                R.DescribeLogDirsPartition(partition_index=p, partition_size=size, offset_lag=0, is_future_key=False)
                for p in t.partitions
            ])
            for t in body.topics
        ])])


def serve_describe(fake: FakeCluster, overrides: dict[str, str] | None = None) -> None:
    fake.answers[ApiKey.LIST_OFFSETS] = lambda version, body: offsets_response(body, 5)
    fake.answers[ApiKey.DESCRIBE_CONFIGS] = lambda version, body: configs_response(body, overrides)
    fake.answers[ApiKey.DESCRIBE_LOG_DIRS] = lambda version, body: sizes_response(body, 700)


def test_describe_shows_offline_replicas(fake_cluster) -> None:
    fake_cluster.topics["orders"][1] = FakePartition(1, (1, 2), isr=(1,), offline=(2,))
    serve_describe(fake_cluster)
    result = spate("topics", "describe", "orders", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert table_row(result.stdout, "0") == ["0", "0", "0,1", "0,1", "5", "5", "700"]
    assert table_row(result.stdout, "1") == ["1", "1", "1,2", "1", "2", "5", "5", "700"]
    assert "Size on disk: 2100 bytes (2.1 KiB)" in result.stdout  # three partitions
    header = next(line for line in result.stdout.splitlines() if "Leader" in line)
    assert header.index("ISR") < header.index("Offline") < header.index("Log start")


def test_describe_as_json_has_every_partition_field_and_no_offsets_without_a_leader(fake_cluster) -> None:
    fake_cluster.topics["orders"][1] = FakePartition(-1, (1, 2), isr=(), offline=(1, 2), leader_epoch=4)
    serve_describe(fake_cluster, {"retention.ms": "1000"})
    result = spate("topics", "describe", "orders", "--output", "json", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    assert document["name"] == "orders" and document["internal"] is False
    assert document["partitions"][1] == {
        "partition": 1, "leader": None, "leader_epoch": 4, "replicas": [1, 2], "isr": [], "offline_replicas": [1, 2],
        "log_start_offset": None, "log_end_offset": None, "size_bytes": None,
    }
    assert document["partitions"][0]["size_bytes"] == 700
    assert document["size_bytes"] == 1400  # the partition without a leader has no size
    assert document["partitions"][0]["log_end_offset"] == 5
    assert document["configs"] == {"retention.ms": {"value": "1000", "source": "DYNAMIC_TOPIC_CONFIG",
                                                    "sensitive": False}}


def test_alter_config_changes_single_keys_with_incremental_alter_configs(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.INCREMENTAL_ALTER_CONFIGS] = lambda version, body: config_change_response(body)
    result = spate("topics", "alter-config", "orders", "--config", "retention.ms=1000", "--delete-config",
                   "segment.ms", "--output", "json", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert json_lines(result.stdout) == [{"topic": "orders", "set": {"retention.ms": "1000"},
                                          "deleted": ["segment.ms"], "api": "IncrementalAlterConfigs"}]
    [(_, body)] = fake_cluster.sent(ApiKey.INCREMENTAL_ALTER_CONFIGS)
    [resource] = body.resources
    assert [(c.name, c.config_operation, c.value) for c in resource.configs] == [
        ("retention.ms", 0, "1000"), ("segment.ms", 1, None)
    ]
    assert fake_cluster.sent(ApiKey.DESCRIBE_CONFIGS) == [] and fake_cluster.sent(ApiKey.ALTER_CONFIGS) == []


def test_alter_config_on_brokers_without_incremental_rewrites_the_overrides() -> None:
    with FakeCluster(topics={"orders": [FakePartition(0, (0,))]},
                     versions=without(ApiKey.INCREMENTAL_ALTER_CONFIGS)) as fake:
        fake.answers[ApiKey.DESCRIBE_CONFIGS] = lambda version, body: configs_response(
            body, {"retention.ms": "5", "segment.ms": "6"}
        )
        fake.answers[ApiKey.ALTER_CONFIGS] = lambda version, body: alter_configs_response(body)
        result = spate("topics", "alter-config", "orders", "--config", "cleanup.policy=compact", "--delete-config",
                       "segment.ms", bootstrap=fake.bootstrap)
        assert result.returncode == 0, result
        assert result.stdout == "Updated configs of topic orders.\n"
        [(_, body)] = fake.sent(ApiKey.ALTER_CONFIGS)
        [resource] = body.resources
        assert {c.name: c.value for c in resource.configs} == {"retention.ms": "5", "cleanup.policy": "compact"}
        assert fake.sent(ApiKey.INCREMENTAL_ALTER_CONFIGS) == []


def test_describe_without_the_size_report_shows_no_sizes() -> None:
    with FakeCluster(topics={"orders": [FakePartition(0, (0,))]}, versions=without(ApiKey.DESCRIBE_LOG_DIRS)) as fake:
        serve_describe(fake)
        result = spate("topics", "describe", "orders", bootstrap=fake.bootstrap)
    assert result.returncode == 0, result
    assert table_row(result.stdout, "0") == ["0", "0", "0", "0", "5", "5", "?"]
    assert "Size on disk" not in result.stdout
