"""``spate jobs run table-view`` SIGKILLed in the middle of a run, then run again: every record applied once.

The job runs as in production (the ``spate`` runner, spark-submit) as its own process group, applying a
few offsets per commit; the whole group is killed once some commits have landed, and a second run finishes.
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

from spark_ext.delta.view_table import OFFSETS_METADATA
from spate.client import Admin, NewTopic, Producer
from tests.support.process_groups import kill_group

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
PARTITIONS, PER_PARTITION, KEYS = 2, 60, 10


def run_view(bootstrap: str, topic: str, table: Path, state_dir: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, "SPATE_STATE_DIR": str(state_dir), "PYSPARK_PYTHON": sys.executable}
    with open(log, "wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "spate.cli.main", "jobs", "run", "table-view", "--master", "local[2]",
             "--topic", topic, "--table", str(table), "--bootstrap-server", bootstrap,
             "--max-offsets-per-commit", "8"],
            cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)


def version_of(table: Path) -> int:
    return DeltaTable(str(table)).version() if (table / "_delta_log").is_dir() else -1


def test_a_run_killed_mid_way_and_run_again_applies_each_record_once(jobs_broker, unique, tmp_path):
    topic = unique("inventory")
    with Admin(jobs_broker.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, configs={"cleanup.policy": "compact"})])
    with Producer(jobs_broker.bootstrap, linger_ms=5) as producer:
        for n in range(PER_PARTITION):
            for p in range(PARTITIONS):
                key = f"item-{p}-{n % KEYS}"
                producer.send(topic, None if n == PER_PARTITION - 1 else f"{n}", key=key, partition=p)
        producer.flush()
    table = tmp_path / "inventory"

    first = run_view(jobs_broker.bootstrap, topic, table, tmp_path / "state", tmp_path / "run-1.log")
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and first.poll() is None and version_of(table) < 3:
        time.sleep(0.2)
    kill_group(first)
    killed_at = version_of(table)
    assert killed_at >= 1, (tmp_path / "run-1.log").read_text()[-3000:]
    assert first.returncode != 0  # killed before it finished

    second = run_view(jobs_broker.bootstrap, topic, table, tmp_path / "state", tmp_path / "run-2.log")
    assert second.wait(300) == 0, (tmp_path / "run-2.log").read_text()[-3000:]

    applied: dict[int, list[int]] = {}
    for entry in reversed(DeltaTable(str(table)).history()):
        for partition, (start, end) in json.loads(entry.get(OFFSETS_METADATA, "{}")).items():
            applied.setdefault(int(partition), []).extend(range(start, end))
    assert applied == {p: list(range(PER_PARTITION)) for p in range(PARTITIONS)}
    expected = {f"item-{p}-{k}": str(max(n for n in range(PER_PARTITION - 1) if n % KEYS == k))
                for p in range(PARTITIONS) for k in range(KEYS)}
    for p in range(PARTITIONS):  # the last record of each partition is a tombstone
        del expected[f"item-{p}-{(PER_PARTITION - 1) % KEYS}"]
    rows = DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    assert {r["key"]: r["value"] for r in rows} == expected and len(rows) == len(expected)
    assert DeltaTable(str(table)).version() > killed_at
    assert "table view" in (tmp_path / "run-2.log").read_text()
