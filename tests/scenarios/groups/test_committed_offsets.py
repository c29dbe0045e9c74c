"""Committed offsets with real clients: durable across broker restarts, and the delivery guarantees they give.

* A consumer resuming a group reads exactly from the last commit: nothing
  committed is read again and nothing after the commit is skipped, even
  after the broker was killed in between.
* Committing *after* processing is at-least-once: a crash between the two
  repeats the processed-but-uncommitted records and loses none.
* Committing *before* processing is at-most-once: a crash between the two
  loses the committed-but-unprocessed records and repeats none.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

from tests.scenarios.groups.conftest import GROUP_BROKER_OVERRIDES
from tests.scenarios.groups.topics import create_topic, produce
from tests.support.broker_under_test import SPATE, BrokerFactory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
PER_PARTITION = 20


@pytest.fixture
def restartable_broker(tmp_path):
    with BrokerFactory(SPATE, tmp_path) as start:
        yield start(GROUP_BROKER_OVERRIDES)


def consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "fetch.wait.max.ms": 100,
    })


def read(c: Consumer, count: int, timeout: float = 30.0) -> list[tuple[int, int, bytes]]:
    """Exactly ``count`` records (partition, offset, value), polling one at a time."""
    got: list[tuple[int, int, bytes]] = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"read {len(got)} of {count} records in {timeout}s")
        message = c.poll(0.2)
        if message is not None and message.error() is None:
            got.append((message.partition(), message.offset(), message.value()))
    return got


def drain(c: Consumer, quiet: float = 2.0) -> list[tuple[int, int, bytes]]:
    """Everything until nothing arrives for ``quiet`` seconds."""
    got: list[tuple[int, int, bytes]] = []
    last = time.monotonic()
    while time.monotonic() - last < quiet:
        message = c.poll(0.2)
        if message is not None and message.error() is None:
            got.append((message.partition(), message.offset(), message.value()))
            last = time.monotonic()
    return got


def test_commits_survive_a_broker_crash_and_a_new_member_resumes_exactly_after_them(restartable_broker, tmp_path):
    broker = restartable_broker
    topic, group = "resume-topic", "resume-group"
    create_topic(broker.bootstrap, topic, 3)
    produce(broker.bootstrap, topic, PER_PARTITION, 3)

    first = consumer(broker.bootstrap, group)
    first.subscribe([topic])
    before = read(first, 25)
    first.commit(asynchronous=False)  # the positions after everything read so far
    committed = {tp.partition: tp.offset for tp in first.committed([TopicPartition(topic, p) for p in range(3)], 30)}
    first.close()
    # Each partition's commit is one past the last record read from it (or absent if none were read).
    for partition in range(3):
        offsets = [o for p, o, _ in before if p == partition]
        assert committed[partition] == (max(offsets) + 1 if offsets else -1001)

    broker.restart(clean=False)  # SIGKILL: the commits must be in the log, not only in memory

    second = consumer(broker.bootstrap, group)
    second.subscribe([topic])
    after = drain(second)
    resumed_from = {tp.partition: tp.offset for tp in second.committed([TopicPartition(topic, p) for p in range(3)], 30)}
    second.close()
    assert resumed_from == committed
    values_before = [v for _, _, v in before]
    values_after = [v for _, _, v in after]
    assert not set(values_before) & set(values_after), "records before the commit were read again"
    assert sorted(values_before + values_after) == sorted(
        f"{p}:{i}".encode() for p in range(3) for i in range(PER_PARTITION)
    ), "records after the commit were skipped"


def test_kafka_python_reads_offsets_committed_by_confluent_after_a_clean_restart(restartable_broker):
    broker = restartable_broker
    topic, group = "shared-topic", "shared-group"
    create_topic(broker.bootstrap, topic, 2)
    first = consumer(broker.bootstrap, group)
    first.commit(offsets=[TopicPartition(topic, 0, 7, "from-confluent"), TopicPartition(topic, 1, 3)],
                 asynchronous=False)
    first.close()
    broker.restart(clean=True)
    other = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        assert other.committed(KafkaTopicPartition(topic, 0)) == 7
        assert other.committed(KafkaTopicPartition(topic, 1)) == 3
        other.commit({KafkaTopicPartition(topic, 1): OffsetAndMetadata(5, "", -1)})
        assert other.committed(KafkaTopicPartition(topic, 1)) == 5
    finally:
        other.close()


def run_worker(bootstrap: str, topic: str, group: str, *, commit_first: bool, crash_after: int | None,
               processed: list[bytes]) -> None:
    """Process records one at a time, committing before or after each; "crash" mid-way through one."""
    c = consumer(bootstrap, group)
    c.subscribe([topic])
    try:
        handled = 0
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 2.0:
            message = c.poll(0.2)
            if message is None or message.error() is not None:
                continue
            idle_since = time.monotonic()
            next_position = [TopicPartition(topic, message.partition(), message.offset() + 1)]
            crashing = crash_after is not None and handled == crash_after
            if commit_first:
                c.commit(offsets=next_position, asynchronous=False)
                if crashing:
                    return  # committed, never processed
                processed.append(message.value())
            else:
                processed.append(message.value())
                if crashing:
                    return  # processed, never committed
                c.commit(offsets=next_position, asynchronous=False)
            handled += 1
    finally:
        c.close()


@pytest.mark.parametrize("commit_first", [False, True], ids=["at-least-once", "at-most-once"])
def test_commit_order_decides_between_duplicates_and_losses_across_a_crash(broker, unique, commit_first):
    topic, group = unique("topic"), unique("group")
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, PER_PARTITION, 1)
    processed: list[bytes] = []
    run_worker(broker.bootstrap, topic, group, commit_first=commit_first, crash_after=7, processed=processed)
    run_worker(broker.bootstrap, topic, group, commit_first=commit_first, crash_after=None, processed=processed)
    every = [f"0:{i}".encode() for i in range(PER_PARTITION)]
    if commit_first:
        # At most once: record 7 was committed but never processed; nothing was repeated.
        assert processed == [r for r in every if r != b"0:7"]
    else:
        # At least once: record 7 was processed but not committed, so it was processed again; nothing lost.
        assert processed == every[:8] + every[7:]
