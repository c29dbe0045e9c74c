"""``jobs/table_view.py``: a compacted topic kept as a Delta table of the latest value per key.

Runs against a real broker process with the shared SparkSession; the table is read back with ``deltalake``.
"""

from __future__ import annotations

import json

import pytest
from deltalake import DeltaTable

from jobs.table_view import TableViewConfig, TableViewError, build_parser, config_from, run
from spark_ext.delta.view_offsets import app_id
from spark_ext.delta.view_table import OFFSETS_METADATA
from spate.client import Admin, NewTopic, Producer

pytestmark = pytest.mark.integration


class InjectedFault(RuntimeError):
    pass


def compacted_topic(bootstrap: str, name: str, partitions: int) -> str:
    with Admin(bootstrap) as admin:
        admin.create_topics([NewTopic(name, num_partitions=partitions, configs={"cleanup.policy": "compact"})])
    return name


def send(bootstrap: str, topic: str, records: list[tuple[str | None, str | None, int]]) -> None:
    """Records of (key, value or None for a tombstone, partition)."""
    with Producer(bootstrap, linger_ms=5) as producer:
        for key, value, partition in records:
            producer.send(topic, value, key=key, partition=partition)
        producer.flush()


def state(path) -> dict[str, str]:
    return {row["key"]: row["value"] for row in DeltaTable(str(path)).to_pyarrow_table().to_pylist()}


def applied_ranges(path) -> list[dict[str, list[int]]]:
    """The offset ranges each commit of the table applied, oldest first."""
    history = reversed(DeltaTable(str(path)).history())
    return [json.loads(entry[OFFSETS_METADATA]) for entry in history if OFFSETS_METADATA in entry]


def assert_each_offset_applied_once(path, ends: dict[int, int]) -> None:
    covered: dict[int, list[int]] = {}
    for ranges in applied_ranges(path):
        for partition, (start, end) in ranges.items():
            covered.setdefault(int(partition), []).extend(range(start, end))
    assert covered == {p: list(range(end)) for p, end in ends.items() if end}


def test_the_table_holds_the_latest_value_of_each_key_and_tombstones_delete(spark, jobs_broker, unique, tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("customers"), 2)
    send(jobs_broker.bootstrap, topic, [("ann", "bronze", 0), ("bob", "silver", 1), ("ann", "gold", 0),
                                        ("cid", "bronze", 1), ("bob", None, 1)])
    config = TableViewConfig(topic, str(tmp_path / "customers"), jobs_broker.bootstrap)
    summary = run(spark, config)
    assert state(config.table) == {"ann": "gold", "cid": "bronze"}
    assert summary.next_offsets == {0: 2, 1: 3}
    rows = {r["key"]: r for r in DeltaTable(config.table).to_pyarrow_table().to_pylist()}
    assert (rows["ann"]["partition"], rows["ann"]["offset"]) == (0, 1)
    assert rows["ann"]["timestamp"] is not None


def test_a_second_run_reads_only_the_new_offsets(spark, jobs_broker, unique, tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("prices"), 1)
    send(jobs_broker.bootstrap, topic, [(f"sku-{n}", f"{n}.00", 0) for n in range(5)])
    config = TableViewConfig(topic, str(tmp_path / "prices"), jobs_broker.bootstrap)
    run(spark, config)
    version = DeltaTable(config.table).version()
    assert run(spark, config).commits == []  # nothing new: no new version
    assert DeltaTable(config.table).version() == version

    send(jobs_broker.bootstrap, topic, [("sku-1", "1.50", 0), ("sku-4", None, 0), ("sku-9", "9.00", 0)])
    second = run(spark, config)
    assert [c.ranges[0].start for c in second.commits] == [5]
    assert applied_ranges(config.table) == [{"0": [0, 5]}, {"0": [5, 8]}]
    assert state(config.table) == {"sku-0": "0.00", "sku-1": "1.50", "sku-2": "2.00", "sku-3": "3.00",
                                   "sku-9": "9.00"}
    assert DeltaTable(config.table).transaction_version(app_id(topic, 0)) == 8
    before = DeltaTable(config.table, version=version).to_pyarrow_table().to_pylist()
    assert {r["key"]: r["value"] for r in before}["sku-1"] == "1.00"  # time travel


@pytest.mark.parametrize("point", ["before-commit", "after-commit"])
def test_a_run_failing_between_reading_and_finishing_applies_nothing_twice(point, spark, jobs_broker, unique,
                                                                           tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("accounts"), 2)
    send(jobs_broker.bootstrap, topic, [(f"acct-{n % 6}", f"v{n}", n % 2) for n in range(24)])
    config = TableViewConfig(topic, str(tmp_path / "accounts"), jobs_broker.bootstrap, max_offsets_per_commit=4)
    calls = []

    def fail_on_the_second_slice(at: str, ranges) -> None:
        calls.append(at)
        if at == point and calls.count(point) == 2:
            raise InjectedFault(f"{at} of {ranges}")

    with pytest.raises(InjectedFault):
        run(spark, config, fault=fail_on_the_second_slice)
    committed = len(applied_ranges(config.table))
    assert committed == (1 if point == "before-commit" else 2)
    run(spark, config)
    assert len(applied_ranges(config.table)) == 3
    assert_each_offset_applied_once(config.table, {0: 12, 1: 12})
    assert state(config.table) == {f"acct-{k}": f"v{18 + k}" for k in range(6)}


def test_json_values_become_columns(spark, jobs_broker, unique, tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("profiles"), 1)
    send(jobs_broker.bootstrap, topic, [("u1", json.dumps({"name": "Ann", "tier": "gold"}), 0),
                                        ("u2", json.dumps({"name": "Bob", "tier": "silver"}), 0),
                                        ("u2", None, 0)])
    config = TableViewConfig(topic, str(tmp_path / "profiles"), jobs_broker.bootstrap,
                             json_schema="name STRING, tier STRING")
    run(spark, config)
    table = DeltaTable(config.table).to_pyarrow_table()
    assert table.column_names == ["key", "name", "tier", "partition", "offset", "timestamp"]
    assert table.select(["key", "name", "tier"]).to_pylist() == [{"key": "u1", "name": "Ann", "tier": "gold"}]


def test_json_fields_may_not_shadow_the_views_columns(spark, jobs_broker, unique, tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("clash"), 1)
    send(jobs_broker.bootstrap, topic, [("k", json.dumps({"offset": 1}), 0)])
    config = TableViewConfig(topic, str(tmp_path / "clash"), jobs_broker.bootstrap, json_schema="offset LONG")
    with pytest.raises(TableViewError, match="offset"):
        run(spark, config)


def test_arguments_are_checked():
    parser = build_parser()
    config = config_from(parser.parse_args(["--topic", "t", "--table", "rel/dir", "--bootstrap-server", "b:1"]),
                         parser)
    assert config.table.endswith("/rel/dir") and config.table.startswith("/")
    with pytest.raises(SystemExit):
        config_from(parser.parse_args(["--topic", "t", "--table", "x", "--max-offsets-per-commit", "0"]), parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--topic", "t", "--table", "x", "--value-format", "binary", "--json-schema", "a INT"])


def test_a_run_overtaken_by_another_plans_again_and_applies_nothing_twice(spark, jobs_broker, unique, tmp_path):
    topic = compacted_topic(jobs_broker.bootstrap, unique("stock"), 1)
    send(jobs_broker.bootstrap, topic, [(f"item-{n % 3}", f"{n}", 0) for n in range(9)])
    config = TableViewConfig(topic, str(tmp_path / "stock"), jobs_broker.bootstrap)
    overtaken = []

    def another_run_commits_first(at: str, ranges) -> None:
        if at == "before-commit" and not overtaken:
            overtaken.append(run(spark, config))  # a concurrent run applies the same records first

    summary = run(spark, config, fault=another_run_commits_first)
    assert summary.attempts == 2 and summary.commits == []  # planned again: nothing left to apply
    assert applied_ranges(config.table) == [{"0": [0, 9]}]
    assert state(config.table) == {"item-0": "6", "item-1": "7", "item-2": "8"}


def test_a_compaction_between_reading_and_merging_loses_nothing(spark, jobs_broker, unique, tmp_path):
    from spark_ext.delta.optimize import compact

    topic = compacted_topic(jobs_broker.bootstrap, unique("tiers"), 1)
    send(jobs_broker.bootstrap, topic, [(f"user-{n}", "bronze", 0) for n in range(6)])
    config = TableViewConfig(topic, str(tmp_path / "tiers"), jobs_broker.bootstrap, max_offsets_per_commit=2)
    run(spark, config)
    send(jobs_broker.bootstrap, topic, [("user-0", "gold", 0), ("user-5", None, 0)])

    def compaction_meanwhile(at: str, ranges) -> None:
        if at == "before-commit":
            assert compact(config.table, target_size=1 << 20).committed

    run(spark, config, fault=compaction_meanwhile)
    assert state(config.table) == {"user-0": "gold", **{f"user-{n}": "bronze" for n in range(1, 5)}}
    assert_each_offset_applied_once(config.table, {0: 8})
