"""A compacted changelog topic on a real broker: after the cleaner ran, a full read gives exactly the latest
value of every live key, deleted keys are gone after delete.retention.ms, offsets never changed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from spate.records import iter_batches
from tests.scenarios.compaction.changelog import (
    SCALE,
    create_compacted_topic,
    partition_dir,
    read_all,
    records_on_disk,
    scaled_timeout,
    wait_until,
    write_changelog,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(scaled_timeout(240))]

CLEANER = {"log.cleaner.backoff.ms": "200", "log.cleaner.delete.retention.ms": "1000"}


def cleaner_checkpoint(log_dir: Path, topic: str) -> int:
    path = log_dir / "cleaner-offset-checkpoint"
    if not path.exists():
        return 0
    for line in path.read_text().splitlines()[2:]:
        name, partition, offset = line.split()
        if name == topic and partition == "0":
            return int(offset)
    return 0


def first_offset_from(bootstrap: str, topic: str, offset: int) -> int:
    """The offset of the first record a consumer positioned at ``offset`` receives."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "gap-reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, offset)])
        for _ in range(30):
            msg = consumer.poll(1.0)
            if msg is not None and not msg.error():
                return msg.offset()
        raise AssertionError(f"nothing read from offset {offset}")
    finally:
        consumer.close()


def active_base(directory: Path) -> int:
    return max(int(p.name.split(".")[0]) for p in directory.glob("*.log"))


def test_a_compacted_changelog_reads_back_as_the_latest_value_of_each_live_key(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker", overrides=CLEANER).start()
    try:
        topic = "changelog"
        create_compacted_topic(broker.bootstrap, topic, **{"segment.bytes": "262144", "delete.retention.ms": "1000"})
        log = write_changelog(broker.bootstrap, topic, records=100_000 * SCALE, keys=1_000 * SCALE,
                              delete_share=0.05)
        directory = partition_dir(broker.log_dir, topic)
        before = records_on_disk(directory)
        wait_until(lambda: cleaner_checkpoint(broker.log_dir, topic) >= active_base(directory),
                   scaled_timeout(120), "the cleaner to reach the active segment")
        # Other keys roll the last changelog segment into a cleaning, which stamps its tombstones' delete
        # horizon; a cleaning delete.retention.ms later removes every tombstone.
        fillers = []
        for round_ in range(2):
            fillers += write_changelog(broker.bootstrap, topic, records=10_000, keys=20, key_prefix="filler",
                                       seed=round_).entries
            wait_until(lambda: cleaner_checkpoint(broker.log_dir, topic) >= active_base(directory), 120,
                       "the cleaner to reach the active segment")
            time.sleep(1.2)

        read = read_all(broker.bootstrap, topic)
        offsets = [offset for offset, _, _ in read]
        assert offsets == sorted(set(offsets)), "offsets must strictly increase"
        written = {offset: (key, value) for offset, key, value in log.entries + fillers}
        assert all(written[offset] == (key, value) for offset, key, value in read), "a record changed or moved"
        seen = {}
        for _, key, value in read:
            seen[key] = value
        live = {key: value for key, value in seen.items() if not key.startswith(b"filler")}
        assert live == log.live()
        deleted = {key for key, value in log.latest().items() if value is None}
        assert deleted and not deleted & {key for _, key, _ in read}, "a deleted key survived delete.retention.ms"
        gap = next(o for o in range(offsets[0], offsets[-1]) if o not in set(offsets[:200]))
        assert first_offset_from(broker.bootstrap, topic, gap) == min(o for o in offsets if o > gap)
        after = records_on_disk(directory)
        assert after < before / 10
        for path in directory.glob("*.log"):
            list(iter_batches(path.read_bytes(), check_crc=True))  # every rewritten batch has a valid CRC
    finally:
        broker.stop()
