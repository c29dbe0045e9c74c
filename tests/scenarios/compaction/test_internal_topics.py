"""__consumer_offsets is compacted by the broker's cleaner without any job: after many commits it holds
about one record per group and partition, and the groups' offsets survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spate.records import iter_batches
from tests.scenarios.compaction.changelog import (
    FULL_SIZE,
    partition_dir,
    records_on_disk,
    scaled_timeout,
    wait_until,
)
from tests.scenarios.compaction.test_changelog_compaction import active_base, cleaner_checkpoint
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(scaled_timeout(240))]

# 10,000 commits over 20 groups in the suite; the 100,000 over 100 groups with SPATE_COMPACTION_FULL_SIZE=1.
GROUPS = 100 if FULL_SIZE else 20
PARTITIONS = 5
COMMITS = 200 if FULL_SIZE else 100  # per group and partition
OFFSETS_TOPIC = "__consumer_offsets"


def commit_many(bootstrap: str, topic: str, group: str, rounds: int) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        for r in range(rounds):
            offsets = [TopicPartition(topic, p, r * 10 + p + 1) for p in range(PARTITIONS)]
            consumer.commit(offsets=offsets, asynchronous=False)
    finally:
        consumer.close()


def committed(bootstrap: str, topic: str, group: str) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
        return [tp.offset for tp in found]
    finally:
        consumer.close()


def test_consumer_offsets_shrink_to_one_record_per_group_partition_and_survive_a_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker", overrides={
        "offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "1",
        "offsets.topic.segment.bytes": "16384", "log.cleaner.backoff.ms": "200",
    }).start()
    try:
        topic = "events"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=1)])[topic].result(30)
        for g in range(GROUPS):
            commit_many(broker.bootstrap, topic, f"group-{g}", COMMITS)
        directory = partition_dir(broker.log_dir, OFFSETS_TOPIC)
        # A last round of commits by other groups rolls the segment holding the commits above.
        for g in range(3):
            commit_many(broker.bootstrap, topic, f"tail-{g}", 60)
        wait_until(lambda: cleaner_checkpoint(broker.log_dir, OFFSETS_TOPIC) >= active_base(directory),
                   scaled_timeout(90), "the cleaner to compact __consumer_offsets")
        written = GROUPS * PARTITIONS * COMMITS
        cleaned = records_below(directory, active_base(directory))
        assert records_on_disk(directory) > cleaned  # the active segment is never cleaned
        assert cleaned <= (GROUPS + 3) * PARTITIONS * 1.2, f"{cleaned} records left of {written}"

        expected = [(COMMITS - 1) * 10 + p + 1 for p in range(PARTITIONS)]
        broker.restart()
        for g in range(GROUPS):
            assert committed(broker.bootstrap, topic, f"group-{g}") == expected
    finally:
        broker.stop()


def records_below(directory: Path, offset: int) -> int:
    """Records in the segments below ``offset`` (the cleaned part)."""
    total = 0
    for path in sorted(directory.glob("*.log")):
        if int(path.name.split(".")[0]) < offset:
            total += sum(h.records_count for h in iter_batches(path.read_bytes(), check_crc=False))
    return total
