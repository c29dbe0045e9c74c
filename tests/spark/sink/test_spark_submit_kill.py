"""A ``topic A → transform → topic B`` query run by ``spark-submit``, SIGKILLed and restarted.

``jobs/copy_topic.py`` runs as its own process group (the spark-submit
launcher, the JVM, the Python driver and its workers). Three times in the
suite (``SPATE_FAULT_ROUNDS=20`` for the long run) it is killed with SIGKILL at a random point, mostly while micro-batches are
being written and sometimes while it is still starting, then restarted
from its checkpoint; more input arrives between runs. A final run with
``Trigger.AvailableNow`` drains the rest and exits. Then a read_committed
consumer of B must see every input record's output exactly once
(``exactly_once``), or at least once (``at_least_once``).

Both variants run side by side to keep the test short; the random kill
points come from a seed printed at the start (set ``SPATE_KILL_SEED`` to
replay one).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import produce, read_all
from tests.support.faults.scale import FaultScale
from tests.support.process_groups import kill_group

REPO = Path(__file__).resolve().parents[3]
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"
PARTITIONS = 3
INITIAL_RECORDS = 600
RECORDS_PER_RESTART = 120
KILLS = FaultScale.from_environment().rounds
# A run that shows no progress this long is killed anyway (a slow machine, not a failure).
PROGRESS_WAIT_S = 120
FINAL_RUN_TIMEOUT_S = 240


@dataclass
class KillScenario:
    """One query, killed and restarted; ``log`` lists what happened, for the failure message."""

    bootstrap: str
    delivery: str
    source: str
    sink: str
    workdir: Path
    rng: random.Random
    produced: int = 0
    log: list[str] = field(default_factory=list)

    def command(self, *extra: str) -> list[str]:
        return [
            str(SPARK_SUBMIT),
            "--master", "local[2]",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.shuffle.partitions=2",
            # C1-only JIT and the serial collector: a much quicker start on a small machine.
            "--driver-java-options",
            f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'} "
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            str(REPO / "jobs" / "copy_topic.py"),
            "--bootstrap", self.bootstrap,
            "--source", self.source,
            "--sink", self.sink,
            "--checkpoint", str(self.workdir / "checkpoint"),
            "--delivery", self.delivery,
            "--max-offsets-per-trigger", "120",
            "--trigger-ms", "100",
            "--transaction-timeout-ms", "30000",
            *extra,
        ]

    def start(self, run: int, *extra: str) -> subprocess.Popen:
        env = {
            **os.environ,
            "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
        output = open(self.workdir / f"run-{run}.log", "wb")
        try:
            return subprocess.Popen(self.command(*extra), env=env, cwd=REPO, stdout=output, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        finally:
            output.close()

    def add_input(self, count: int) -> None:
        values = [b"in-%d" % n for n in range(self.produced, self.produced + count)]
        produce(self.bootstrap, self.source, values, partitions=PARTITIONS)
        self.produced += count

    def sink_end(self, watcher: Consumer) -> int:
        return sum(watcher.get_watermark_offsets(TopicPartition(self.sink, p), timeout=10)[1]
                   for p in range(PARTITIONS))

    def run(self) -> None:
        self.add_input(INITIAL_RECORDS)
        watcher = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "kill-watcher"})
        try:
            for run in range(KILLS):
                self.kill_once(run, watcher)
                self.add_input(RECORDS_PER_RESTART)
        finally:
            watcher.close()
        final = self.start(KILLS, "--available-now")
        try:
            code = final.wait(FINAL_RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_group(final)
            raise AssertionError(f"{self.delivery}: the final run did not finish:\n{self.tail(KILLS)}") from None
        if code != 0:
            raise AssertionError(f"{self.delivery}: the final run exited with {code}:\n{self.tail(KILLS)}")

    def kill_once(self, run: int, watcher: Consumer) -> None:
        before = self.sink_end(watcher)
        process = self.start(run)
        started = time.monotonic()
        try:
            if self.rng.random() < 0.2:
                # Somewhere in start-up: planning, the first batch's offsets, the first transactions.
                time.sleep(self.rng.uniform(2.0, 15.0))
                when = "during start-up"
            else:
                # While batches are being written: after this run's first output, plus a random delay.
                while self.sink_end(watcher) == before and time.monotonic() - started < PROGRESS_WAIT_S:
                    if process.poll() is not None:
                        raise AssertionError(f"{self.delivery}: run {run} exited early:\n{self.tail(run)}")
                    time.sleep(0.2)
                time.sleep(self.rng.uniform(0.0, 2.0))
                when = "mid-stream"
        finally:
            kill_group(process)
        self.log.append(f"run {run}: killed {when} after {time.monotonic() - started:.1f}s "
                        f"(sink end offsets {before} -> {self.sink_end(watcher)})")

    def tail(self, run: int, lines: int = 40) -> str:
        path = self.workdir / f"run-{run}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(self.log + text.splitlines()[-lines:])

    def outputs(self, isolation: str) -> Counter[str]:
        records = read_all(self.bootstrap, {self.sink: PARTITIONS}, isolation=isolation, expect=self.produced)
        return Counter(r.value.decode().split("|")[0] for r in records)


@pytest.fixture
def seed() -> int:
    value = int(os.environ.get("SPATE_KILL_SEED", random.randrange(1 << 30)))
    print(f"kill test seed: {value} (SPATE_KILL_SEED={value} replays the kill points)")
    return value


@pytest.mark.timeout(900)
def test_killed_query_outputs_each_input_exactly_once_or_at_least_once(broker, unique, tmp_path, seed) -> None:
    scenarios = []
    for delivery in ("exactly_once", "at_least_once"):
        source, sink = unique(f"{delivery}-a"), unique(f"{delivery}-b")
        create_topic(broker.bootstrap, source, PARTITIONS)
        create_topic(broker.bootstrap, sink, PARTITIONS)
        workdir = tmp_path / delivery
        workdir.mkdir()
        rng = random.Random(f"{seed}-{delivery}")
        scenarios.append(KillScenario(broker.bootstrap, delivery, source, sink, workdir, rng))

    with ThreadPoolExecutor(len(scenarios)) as pool:
        for future in [pool.submit(s.run) for s in scenarios]:
            future.result()

    exactly, at_least = scenarios
    expected = {f"in-{n}" for n in range(exactly.produced)}
    committed = exactly.outputs("read_committed")
    assert set(committed) == expected, "\n".join(exactly.log)
    duplicated = {value: count for value, count in committed.items() if count > 1}
    assert not duplicated, f"outputs seen more than once: {sorted(duplicated.items())[:10]}\n" + "\n".join(exactly.log)

    seen = at_least.outputs("read_uncommitted")
    assert set(seen) == {f"in-{n}" for n in range(at_least.produced)}, "\n".join(at_least.log)
    print("\n".join(exactly.log + at_least.log))
    print(f"at_least_once duplicates: {sum(seen.values()) - len(seen)}")
