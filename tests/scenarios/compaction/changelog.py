"""A changelog topic for the compaction scenarios: writing it, reading it whole, and what compaction must keep.

The suite runs the issue's volumes at a tenth (100,000 changelog records over
1,000 keys; 10,000 offset commits over 20 groups); ``SPATE_COMPACTION_FULL_SIZE=1``
runs them in full (1,000,000 records over 10,000 keys; 100,000 commits over
100 groups), with time limits to match.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spate.records import iter_batches, iter_records

Entry = tuple[int, bytes, bytes | None]  # offset, key, value (None: tombstone)

FULL_SIZE = os.environ.get("SPATE_COMPACTION_FULL_SIZE", "") not in ("", "0")
SCALE = 10 if FULL_SIZE else 1  # how many times the suite's volumes the full-size variant writes


def scaled_timeout(seconds: float) -> float:
    """A time limit for the suite's volume, stretched for the full-size variant."""
    return seconds * SCALE


def create_compacted_topic(bootstrap: str, name: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    settings = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01", **configs}
    admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1, config=settings)])[name].result(30)


@dataclass
class Changelog:
    """What was written to partition 0 of a topic, in offset order."""

    entries: list[Entry] = field(default_factory=list)

    def latest(self, below: int | None = None) -> dict[bytes, bytes | None]:
        found: dict[bytes, bytes | None] = {}
        for offset, key, value in self.entries:
            if below is None or offset < below:
                found[key] = value
        return found

    def live(self) -> dict[bytes, bytes]:
        return {key: value for key, value in self.latest().items() if value is not None}

    def compacted(self, dirty_end: int) -> list[Entry]:
        """The log after one cleaning of ``[0, dirty_end)`` that keeps tombstones."""
        last: dict[bytes, int] = {}
        for offset, key, _ in self.entries:
            if offset < dirty_end:
                last[key] = offset
        return [e for e in self.entries if e[0] >= dirty_end or last[e[1]] == e[0]]


def write_changelog(
    bootstrap: str, topic: str, *, records: int, keys: int, delete_share: float = 0.0, seed: int = 7,
    value_size: int = 40, key_prefix: str = "key", acks: str = "1",
) -> Changelog:
    """``records`` updates over ``keys`` keys (some of them tombstones); return what landed where."""
    rng = random.Random(seed)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 500,
                         "enable.idempotence": False, "acks": acks})
    log = Changelog()
    failures: list[str] = []

    def delivered(err: KafkaError | None, msg) -> None:  # type: ignore[no-untyped-def]
        if err is not None:
            failures.append(str(err))
        else:
            log.entries.append((msg.offset(), msg.key(), msg.value()))

    for i in range(records):
        key = f"{key_prefix}-{rng.randrange(keys):05d}".encode()
        value = None if rng.random() < delete_share else (f"{i}:".encode() + b"x" * value_size)
        for _ in range(600):  # the client's queue holds 100,000 records: wait for deliveries when it is full
            try:
                producer.produce(topic, key=key, value=value, partition=0, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.1)
        else:
            raise AssertionError(f"the producer's queue stayed full for a minute at record {i}")
        if i % 5000 == 4999:
            producer.poll(0)
    if producer.flush(60 * SCALE):
        raise AssertionError("records left undelivered")
    if failures:
        raise AssertionError(f"produce failed: {failures[:3]}")
    log.entries.sort()
    return log


def read_all(bootstrap: str, topic: str, *, isolation: str = "read_uncommitted", timeout_s: float = 60) -> list[Entry]:
    """Every record of partition 0 from the log start to the high watermark, as a consumer sees it."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}", "enable.auto.commit": False,
        "enable.partition.eof": True, "isolation.level": isolation, "auto.offset.reset": "earliest",
    })
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, -2)])
        found: list[Entry] = []
        deadline = time.monotonic() + timeout_s * SCALE
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF and msg.offset() >= high:
                    return found
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise AssertionError(f"fetch failed: {msg.error()}")
            found.append((msg.offset(), msg.key(), msg.value()))
        raise AssertionError(f"reading {topic} did not reach {high} in {timeout_s}s (at {len(found)} records)")
    finally:
        consumer.close()


def partition_dir(log_dir: Path, topic: str, partition: int = 0) -> Path:
    return log_dir / f"{topic}-{partition}"


def records_on_disk(directory: Path) -> int:
    """How many records the partition's live segments hold (control records included)."""
    total = 0
    for path in sorted(directory.glob("*.log")):
        total += sum(h.records_count for h in iter_batches(path.read_bytes(), check_crc=False))
    return total


def entries_on_disk(directory: Path) -> list[Entry]:
    found: list[Entry] = []
    for path in sorted(directory.glob("*.log")):
        found += [(r.offset, r.key, r.value) for r in iter_records(path.read_bytes())]
    return found


def wait_until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
