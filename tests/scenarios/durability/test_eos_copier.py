"""Exactly-once consume-transform-produce survives SIGKILL at random points.

The copier (``tests.scenarios.durability.eos_copier``, a separate process) copies
100,000 records from an input topic to an output topic in transactions that
also carry the consumed offsets. The test kills it with SIGKILL several
times at random instants (seeded; the seed is printed, and
``SPATE_TEST_SEED`` replays it), restarts it each time, and lets the last
instance run until the input is fully committed. A read_committed consumer
of the output must then see exactly the input: every record once, with its
key, and in the single-partition variant in the input's order.

Kill points: most kills follow a commit by a random delay of up to a few
commits, so they land inside an open transaction or in the middle of a
commit, spread over the whole copy; one lands at a random instant within
half a second of start (during init_transactions, the group join or the
first transactions).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

REPO = Path(__file__).resolve().parents[3]

RECORDS = 100_000
COMMIT_RECORDS = 1_000
COMMIT_MS = 100
# Latest instant of the kill that comes before the copier's first commit is likely: start, join, first fetch.
EARLY_KILL_S = 0.5
# Longest wait between a commit the copier reported and its kill: about as long as a few commits take.
KILL_DELAY_S = 0.03
SENTINEL_KEY = b"--end--"
COPIER_EXIT_TIMEOUT_S = 60
READ_TIMEOUT_S = 60

# Small internal topics and a short initial rebalance delay, so each restart of the copier is quick.
BROKER_OVERRIDES = {
    "transaction.state.log.num.partitions": "5",
    "offsets.topic.num.partitions": "5",
    "group.initial.rebalance.delay.ms": "100",
}


@pytest.fixture(scope="module")
def txn_broker(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    require_spate(broker_kind, "its read_committed fetch returns records of aborted transactions")
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("eos"), overrides=dict(BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running


@pytest.fixture
def seed() -> int:
    value = int(os.environ.get("SPATE_TEST_SEED", random.randrange(2**32)))
    print(f"copier kill seed: {value} (replay with SPATE_TEST_SEED={value})")
    return value


# ---------------------------------------------------------------- topics and data


def create_topics(bootstrap: str, partitions: dict[str, int]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, count, 1) for name, count in partitions.items()])
    for future in futures.values():
        future.result(30)


def record(index: int) -> tuple[bytes, bytes]:
    """(key, value) of input record ``index``: the value is unique and names its key."""
    return f"k{index}".encode(), f"record-{index:010d}".encode()


def produce_input(bootstrap: str, topic: str, partitions: int) -> list[list[tuple[bytes, bytes]]]:
    """Writes RECORDS records round-robin over the partitions; returns each partition's records in order."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": RECORDS + 1000})
    written: list[list[tuple[bytes, bytes]]] = [[] for _ in range(partitions)]
    for index in range(RECORDS):
        key, value = record(index)
        partition = index % partitions
        producer.produce(topic, key=key, value=value, partition=partition)
        written[partition].append((key, value))
    if producer.flush(60):
        raise AssertionError("the input was not fully delivered")
    return written


def read_committed_output(bootstrap: str, topic: str, partitions: int) -> list[list[tuple[bytes, bytes]]]:
    """Every committed record of ``topic``, per partition in offset order.

    A sentinel is appended to each partition first: a read_committed reader
    cannot tell the end from offsets alone (aborted records and markers
    take offsets too), so it reads until it has met every sentinel.
    """
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition in range(partitions):
        producer.produce(topic, key=SENTINEL_KEY, value=b"", partition=partition)
    if producer.flush(30):
        raise AssertionError("sentinels were not delivered")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "eos-verifier", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    seen: list[list[tuple[bytes, bytes]]] = [[] for _ in range(partitions)]
    ended: set[int] = set()
    deadline = time.monotonic() + READ_TIMEOUT_S
    try:
        while len(ended) < partitions and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.2):
                if message.error():
                    continue
                if message.key() == SENTINEL_KEY:
                    ended.add(message.partition())
                else:
                    seen[message.partition()].append((message.key(), message.value()))
    finally:
        consumer.close()
    if len(ended) < partitions:
        raise AssertionError(f"read_committed reader met the sentinels of partitions {sorted(ended)} only")
    return seen


def committed_input_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 30)
    finally:
        consumer.close()
    return [tp.offset for tp in sorted(committed, key=lambda tp: tp.partition)]


# ---------------------------------------------------------------- the copier process


@dataclass
class CopierProcess:
    """One copier subprocess; a thread follows its progress lines."""

    process: subprocess.Popen
    stderr_path: Path
    progress: int = 0
    caught_up: bool = False
    _changed: threading.Condition = field(default_factory=threading.Condition)

    @classmethod
    def start(cls, bootstrap: str, input_topic: str, output_topic: str, group: str, txn_id: str,
              stderr_path: Path) -> CopierProcess:
        command = [
            sys.executable, "-m", "tests.scenarios.durability.eos_copier",
            "--bootstrap", bootstrap, "--input", input_topic, "--output", output_topic,
            "--group", group, "--transactional-id", txn_id,
            "--commit-records", str(COMMIT_RECORDS), "--commit-ms", str(COMMIT_MS),
            "--exit-when-caught-up",
        ]
        with open(stderr_path, "ab") as stderr:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=REPO)
        copier = cls(process, stderr_path)
        threading.Thread(target=copier._follow, daemon=True).start()
        return copier

    def _follow(self) -> None:
        for line in self.process.stdout:
            event, _, count = line.strip().partition(" ")
            with self._changed:
                if event in ("committed", "caught-up"):
                    self.progress = int(count)
                self.caught_up = self.caught_up or event == "caught-up"
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for_progress(self, records: int, timeout: float) -> None:
        """Until the copier has committed ``records`` input records, or has exited."""
        with self._changed:
            done = self._changed.wait_for(lambda: self.progress >= records or self.process.poll() is not None,
                                          timeout)
        if not done:
            raise AssertionError(f"the copier committed {self.progress} of {records} records in {timeout}s")

    def kill(self) -> bool:
        """SIGKILL; False if the copier had already exited."""
        if self.process.poll() is not None:
            return False
        self.process.kill()
        self.process.wait()
        return True

    def stderr_tail(self) -> str:
        return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-30:])


def copy_with_kills(broker: BrokerProcess, tmp_path: Path, rng: random.Random, input_topic: str,
                    output_topic: str, group: str, kills: int) -> list[str]:
    """Runs the copier, killing it ``kills`` times at random points; returns what each kill hit.

    Kill ``i`` waits until the copier has committed a random number of records
    within the ``i``-th of ``kills`` equal slices of the first 90% of the
    input, then for a random delay of up to a few commits, so kills spread
    over the whole copy and land inside transactions and commits alike.
    One kill, chosen at random, instead comes at a random instant after start.
    """
    txn_id = f"{group}-txn"
    stderr_path = tmp_path / "copier.stderr"
    early_kill = rng.randrange(kills)
    slice_width = RECORDS * 0.9 / kills
    history = []
    for attempt in range(kills):
        copier = CopierProcess.start(broker.bootstrap, input_topic, output_topic, group, txn_id, stderr_path)
        if attempt == early_kill:
            time.sleep(rng.uniform(0.0, EARLY_KILL_S))
        else:
            threshold = int(rng.uniform(attempt, attempt + 0.6) * slice_width)
            try:
                copier.wait_for_progress(threshold, COPIER_EXIT_TIMEOUT_S)
            except AssertionError:
                copier.kill()
                raise
            time.sleep(rng.uniform(0.0, KILL_DELAY_S))
        progress = copier.progress
        if copier.kill():
            history.append(f"killed at {progress} committed records" if progress else "killed before its first commit")
        elif copier.process.returncode != 0:
            raise AssertionError(f"the copier failed with {copier.process.returncode}:\n{copier.stderr_tail()}")
        else:
            history.append("finished before its kill")
    final = CopierProcess.start(broker.bootstrap, input_topic, output_topic, group, txn_id, stderr_path)
    try:
        code = final.process.wait(COPIER_EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        final.kill()
        raise AssertionError(f"the last copier did not catch up in {COPIER_EXIT_TIMEOUT_S}s "
                             f"(at {final.progress}):\n{final.stderr_tail()}")
    if code != 0 or not final.caught_up:
        raise AssertionError(f"the last copier exited with {code}:\n{final.stderr_tail()}")
    print("; ".join(history))
    return history


def duplicates(records: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [r for r, count in Counter(records).items() if count > 1][:5]


def set_difference(copied: list[tuple[bytes, bytes]], expected: list[tuple[bytes, bytes]]) -> dict[str, list]:
    """A few records missing from the copy and a few it should not hold (a key changed, say)."""
    return {
        "missing": sorted(set(expected) - set(copied))[:5],
        "unexpected": sorted(set(copied) - set(expected))[:5],
    }


def first_divergence(copied: list[tuple[bytes, bytes]], expected: list[tuple[bytes, bytes]]) -> int | None:
    """Index of the first position where the two sequences differ, or None if they are equal."""
    for index, (got, want) in enumerate(zip(copied, expected)):
        if got != want:
            return index
    return None if len(copied) == len(expected) else min(len(copied), len(expected))


# ---------------------------------------------------------------- tests


def test_copier_killed_at_random_points_copies_every_record_exactly_once(txn_broker, topic_name, tmp_path, seed):
    input_topic, output_topic, group = topic_name("in"), topic_name("out"), topic_name("group")
    create_topics(txn_broker.bootstrap, {input_topic: 2, output_topic: 3})
    written = produce_input(txn_broker.bootstrap, input_topic, 2)

    copy_with_kills(txn_broker, tmp_path, random.Random(seed), input_topic, output_topic, group, kills=8)

    output = read_committed_output(txn_broker.bootstrap, output_topic, 3)
    copied = [r for partition in output for r in partition]
    expected = [r for partition in written for r in partition]
    assert duplicates(copied) == [], f"seed {seed}"
    assert set_difference(copied, expected) == {"missing": [], "unexpected": []}, f"seed {seed}"
    assert len(copied) == RECORDS, f"seed {seed}"
    assert committed_input_offsets(txn_broker.bootstrap, group, input_topic, 2) == [len(p) for p in written]


def test_single_partition_copier_killed_at_random_points_preserves_order(txn_broker, topic_name, tmp_path, seed):
    input_topic, output_topic, group = topic_name("in"), topic_name("out"), topic_name("group")
    create_topics(txn_broker.bootstrap, {input_topic: 1, output_topic: 1})
    written = produce_input(txn_broker.bootstrap, input_topic, 1)

    copy_with_kills(txn_broker, tmp_path, random.Random(seed), input_topic, output_topic, group, kills=5)

    [copied] = read_committed_output(txn_broker.bootstrap, output_topic, 1)
    assert duplicates(copied) == [], f"seed {seed}"
    assert first_divergence(copied, written[0]) is None, f"seed {seed}"
    assert committed_input_offsets(txn_broker.bootstrap, group, input_topic, 1) == [RECORDS]
