"""``spate jobs run delta-maintenance``: compaction and vacuum of a Delta table, also while ingest writes it.

Tables are read back with ``deltalake`` alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deltalake import DeltaTable

from jobs.delta_maintenance import MaintenanceConfig, build_parser, config_from, maintain, parse_size
from jobs.ingest import IngestConfig, start_query
from spark_ext.delta.optimize import OPERATION_METADATA
from tests.spark.delta.delta_tables import content, small_files_table
from tests.spark.kafka_data import create_topic, produce

REPO = Path(__file__).resolve().parents[2]


def spate(*args: str, state_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPATE_STATE_DIR": str(state_dir), "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def orphan_in(table: Path) -> Path:
    orphan = table / "part-00007-of-a-killed-attempt.c000.zstd.parquet"
    orphan.write_bytes(b"never committed")
    return orphan


@pytest.mark.integration
def test_a_short_retention_is_refused_then_forced_through_spate_jobs_run(tmp_path):
    table = tmp_path / "events"
    small_files_table(str(table), commits=8)
    orphan, before = orphan_in(table), content(DeltaTable(str(table)))
    files = sorted(os.listdir(table))

    refused = spate("jobs", "run", "delta-maintenance", "--table", str(table), "--vacuum-retention", "0h",
                    state_dir=tmp_path / "state")
    assert refused.returncode == 2, refused.stderr[-2000:]
    said = refused.stdout + refused.stderr  # spark-submit passes the job's stderr on as its stdout
    assert "--force" in said and "deletedFileRetentionDuration" in said
    assert sorted(os.listdir(table)) == files and DeltaTable(str(table)).version() == 7

    forced = spate("jobs", "run", "delta-maintenance", "--table", str(table), "--vacuum-retention", "0h",
                   "--force", "--output", "json", state_dir=tmp_path / "state")
    assert forced.returncode == 0, forced.stderr[-2000:]
    lines = forced.stdout.splitlines()
    summary = json.loads("\n".join(lines[lines.index("{"):lines.index("}") + 1]))
    assert summary["compaction"]["before"]["files"] == 8 and summary["compaction"]["after"]["files"] == 1
    assert summary["vacuum"]["files_deleted"] == 9  # eight compacted away, one orphan
    assert not orphan.exists()
    assert content(DeltaTable(str(table))) == before
    assert len([f for f in os.listdir(table) if f.endswith(".parquet")]) == 1


def test_the_text_summary_says_what_changed(tmp_path, capsys):
    from jobs.delta_maintenance import main

    table = tmp_path / "t"
    small_files_table(str(table), commits=3)
    assert main(["--table", str(table), "--vacuum-retention", "1h", "--force", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "vacuum (retention 1h): would delete 0 file(s)" in out and "compaction" not in out
    assert main(["--table", str(table), "--no-vacuum"]) == 0
    out = capsys.readouterr().out
    assert "3 file(s) compacted into 1 (version 3, dataChange=false); files 3 -> 1" in out and "vacuum" not in out


def test_arguments_are_checked(tmp_path):
    parser = build_parser()
    config = config_from(parser.parse_args(["--table", "rel", "--target-file-size", "64m", "--vacuum-retention",
                                            "2d"]), parser)
    assert (config.target_file_size, config.retention_hours) == (64 << 20, 48)
    assert os.path.isabs(config.table)
    assert parse_size("1g") == 1 << 30
    for bad in (["--target-file-size", "0"], ["--vacuum-retention", "30m"]):
        with pytest.raises(SystemExit):
            config_from(parser.parse_args(["--table", "t", *bad]), parser)


def rows_in(table: str) -> int:
    if not os.path.isdir(os.path.join(table, "_delta_log")):
        return 0
    return DeltaTable(table).to_pyarrow_table().num_rows


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_maintenance_while_the_ingest_query_runs_loses_and_duplicates_nothing(spark, jobs_broker, unique, tmp_path):
    topic = unique("clicks")
    create_topic(jobs_broker.bootstrap, topic, 2)
    table = str(tmp_path / "clicks")
    query = start_query(spark, IngestConfig(topic=topic, table=table, bootstrap_servers=jobs_broker.bootstrap,
                                            checkpoint=str(tmp_path / "ckpt"), trigger_interval_ms=200))
    rounds, per_round = 6, 50
    compactions = []
    try:
        for n in range(rounds):
            produce(jobs_broker.bootstrap, topic, [
                {"value": f"{n}:{i}".encode(), "key": b"k", "partition": i % 2} for i in range(per_round)])
            time.sleep(0.6)
            if rows_in(table):
                compactions.append(maintain(MaintenanceConfig(table, target_file_size=1 << 20, retention_hours=168)))
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and rows_in(table) < rounds * per_round:
            time.sleep(0.5)
    finally:
        query.stop()
    final = maintain(MaintenanceConfig(table, target_file_size=1 << 20, retention_hours=168))
    rows = DeltaTable(table).to_pyarrow_table().to_pylist()
    assert sorted((r["partition"], r["offset"]) for r in rows) == sorted(
        (p, o) for p in range(2) for o in range(rounds * per_round // 2))
    assert sorted(r["value"] for r in rows) == sorted(f"{n}:{i}".encode() for n in range(rounds)
                                                      for i in range(per_round))
    committed = [c.compaction for c in [*compactions, final] if c.compaction.committed]
    assert committed and final.compaction.after.files == 1
    compaction_commits = [h for h in DeltaTable(table).history() if h.get(OPERATION_METADATA) == "compaction"]
    assert len(compaction_commits) == len(committed)
    for entry in compaction_commits:
        with open(f"{table}/_delta_log/{entry['version']:020d}.json", encoding="utf-8") as log:
            actions = [json.loads(line) for line in log if line.strip()]
        assert all((a.get("add") or a.get("remove"))["dataChange"] is False for a in actions
                   if "add" in a or "remove" in a)
