"""The ingest job killed again and again: the Delta table still holds every record exactly once.

``jobs/ingest.py`` runs under spark-submit as its own process group on
``local[2,4]`` (two cores, a failed task retried). Each round starts it,
SIGKILLs the whole group at a random point — mostly while micro-batches are
being committed, sometimes still during start-up — and then adds more input.
Throughout, every task's first attempt fails with probability 0.3 after it
wrote its files (``testFailTaskProbability``), so Spark retries tasks too. A
last run with ``--available-now`` drains the topic. While the query commits,
the maintenance job's compaction rewrites the table's small files. Then:

- the table, read with ``deltalake`` alone, holds each produced record once:
  no duplicate, no gap, the same values;
- no file of a killed or failed attempt is referenced by the table, and
  vacuum removes every one of them, leaving the table as it was.

``SPATE_FAULT_ROUNDS`` sets the number of kills (3 in the suite,
``SPATE_FAULT_ROUNDS=20`` for the full run); the kill points come from a seed
that is printed, ``SPATE_TEST_SEED`` replays it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from deltalake import DeltaTable

from spark_ext.delta.optimize import compact
from tests.spark.kafka_data import create_topic, produce
from tests.support.faults.scale import SEED_ENV, FaultScale
from tests.support.process_groups import kill_group

REPO = Path(__file__).resolve().parents[2]
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"
PARTITIONS = 3
INITIAL_RECORDS = 900
RECORDS_PER_ROUND = 150
FAIL_TASK_PROBABILITY = 0.3
PROGRESS_WAIT_S = 120
FINAL_RUN_TIMEOUT_S = 300


@dataclass
class KillLoop:
    bootstrap: str
    topic: str
    workdir: Path
    rng: random.Random
    produced: int = 0
    log: list[str] = field(default_factory=list)
    compactions: int = 0

    @property
    def table(self) -> Path:
        return self.workdir / "table"

    def command(self, *extra: str) -> list[str]:
        return [
            str(SPARK_SUBMIT), "--master", "local[2,4]",
            "--conf", "spark.ui.enabled=false",
            "--driver-java-options",
            f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'} -XX:TieredStopAtLevel=1 "
            "-XX:+UseSerialGC",
            str(REPO / "jobs" / "ingest.py"),
            "--topic", self.topic, "--table", str(self.table), "--bootstrap-server", self.bootstrap,
            "--max-offsets-per-trigger", "90", "--fail-task-probability", str(FAIL_TASK_PROBABILITY),
            *(extra or ("--trigger-interval", "100ms")),
        ]

    def start(self, run: int, *extra: str) -> subprocess.Popen:
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
               "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
        with open(self.workdir / f"run-{run}.log", "wb") as output:
            return subprocess.Popen(self.command(*extra), env=env, cwd=REPO, stdout=output,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def add_input(self, count: int) -> None:
        produce(self.bootstrap, self.topic, [
            {"key": b"k%d" % n, "value": b"in-%d" % n, "partition": n % PARTITIONS}
            for n in range(self.produced, self.produced + count)
        ])
        self.produced += count

    def commits(self) -> int:
        log = self.table / "_delta_log"
        return len(list(log.glob("*.json"))) if log.exists() else 0

    def kill_once(self, run: int) -> None:
        before = self.commits()
        process = self.start(run)
        started = time.monotonic()
        try:
            if self.rng.random() < 0.2:
                time.sleep(self.rng.uniform(2.0, 15.0))
                when = "during start-up"
            else:
                while self.commits() == before and time.monotonic() - started < PROGRESS_WAIT_S:
                    if process.poll() is not None:
                        raise AssertionError(f"run {run} exited early:\n{self.tail(run)}")
                    time.sleep(0.1)
                self.compact()  # the maintenance job's compaction, while the query commits batches
                time.sleep(self.rng.uniform(0.0, 2.0))
                when = "mid-stream"
        finally:
            kill_group(process)
        self.log.append(f"run {run}: killed {when} after {time.monotonic() - started:.1f}s "
                        f"(commits {before} -> {self.commits()})")

    def compact(self) -> None:
        if self.commits():
            result = compact(str(self.table), target_size=1 << 20)
            self.compactions += result.committed

    def run(self, rounds: int) -> None:
        self.add_input(INITIAL_RECORDS)
        for run in range(rounds):
            self.kill_once(run)
            self.add_input(RECORDS_PER_ROUND)
        final = self.start(rounds, "--available-now")
        try:
            code = final.wait(FINAL_RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_group(final)
            raise AssertionError(f"the final run did not finish:\n{self.tail(rounds)}") from None
        assert code == 0, f"the final run exited with {code}:\n{self.tail(rounds)}"

    def tail(self, run: int, lines: int = 40) -> str:
        path = self.workdir / f"run-{run}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(self.log + text.splitlines()[-lines:])

    def injected_failures(self) -> int:
        """Task attempts the sink failed on purpose, as the runs' logs report them (each may be logged twice)."""
        return sum(path.read_text(errors="replace").count("InjectedTaskFailure")
                   for path in self.workdir.glob("run-*.log"))


@pytest.fixture
def seed() -> int:
    value = int(os.environ.get(SEED_ENV, random.randrange(1 << 30)))
    print(f"ingest kill loop seed: {value} ({SEED_ENV}={value} replays the kill points)")
    return value


@pytest.mark.timeout(3600)
def test_a_killed_and_failing_ingest_writes_each_record_exactly_once(jobs_broker, unique, tmp_path, seed):
    rounds = FaultScale.from_environment().rounds
    topic = unique("in")
    create_topic(jobs_broker.bootstrap, topic, PARTITIONS)
    loop = KillLoop(jobs_broker.bootstrap, topic, tmp_path, random.Random(seed))
    loop.run(rounds)
    story = "\n".join(loop.log)

    table = DeltaTable(str(loop.table))
    rows = table.to_pyarrow_table(columns=["partition", "offset", "value"]).to_pylist()
    values = Counter(r["value"] for r in rows)
    duplicated = {v: n for v, n in values.items() if n > 1}
    assert not duplicated, f"records written more than once: {sorted(duplicated.items())[:10]}\n{story}"
    missing = {b"in-%d" % n for n in range(loop.produced)} - set(values)
    assert not missing, f"{len(missing)} record(s) missing, e.g. {sorted(missing)[:10]}\n{story}"
    assert len(rows) == loop.produced
    assert all(r["value"] == b"in-%d" % _input_index(r) for r in rows)

    referenced = {Path(uri.removeprefix("file://")).name for uri in table.file_uris()}
    on_disk = {p.name for p in loop.table.glob("*.parquet")}
    orphans = on_disk - referenced
    removed = table.vacuum(retention_hours=0, enforce_retention_duration=False, full=True, dry_run=False)
    assert {Path(p).name for p in removed} == orphans
    assert {p.name for p in loop.table.glob("*.parquet")} == referenced
    assert DeltaTable(str(loop.table)).to_pyarrow_table().num_rows == loop.produced
    print(f"{story}\n{len(orphans)} orphan or compacted-away file(s) vacuumed; {loop.compactions} compaction(s) "
          f"committed while the query ran; {loop.injected_failures()} injected task failure(s) logged")
    assert loop.injected_failures() > 0, "no task failed: the executor fault was never exercised"


def _input_index(row: dict) -> int:
    # Input n went to partition n % PARTITIONS, in order, so its offset there is n // PARTITIONS.
    return row["offset"] * PARTITIONS + row["partition"]
