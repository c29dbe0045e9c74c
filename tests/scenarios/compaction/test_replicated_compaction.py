"""Compaction with replication: every replica cleans its own copy of the log with the same rules, so each
one shrinks and keeps the same latest value of every key, and the leader's failover loses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.scenarios.compaction.changelog import (
    entries_on_disk,
    read_all,
    wait_until,
    write_changelog,
)
from tests.scenarios.compaction.test_changelog_compaction import active_base, cleaner_checkpoint
from tests.support.cluster import settled_cluster
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

TOPIC = "replicated-changelog"


def latest(entries) -> dict:  # type: ignore[no-untyped-def]
    found = {}
    for _, key, value in entries:
        found[key] = value
    return found


def test_every_replica_compacts_its_own_log_to_the_same_latest_values(
    tmp_path: Path, zookeeper: ZooKeeperForTests
) -> None:
    overrides = {"log.cleaner.backoff.ms": "200", "offsets.topic.num.partitions": "1",
                 "replica.fetch.backoff.ms": "200"}
    with settled_cluster(tmp_path, zookeeper, brokers=3, overrides=overrides) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        config = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01", "segment.bytes": "65536",
                  "min.insync.replicas": "2"}
        admin.create_topics([NewTopic(TOPIC, 1, 3, config=config)])[TOPIC].result(30)
        cluster.wait_for_metadata([TOPIC])
        log = write_changelog(cluster.bootstrap, TOPIC, records=20_000, keys=200, acks="all")
        filler = write_changelog(cluster.bootstrap, TOPIC, records=3_000, keys=5, key_prefix="filler", seed=3,
                                 acks="all")
        dirs = {broker_id: broker.log_dir for broker_id, broker in cluster.brokers.items()}
        for broker_id, log_dir in dirs.items():
            directory = log_dir / f"{TOPIC}-0"
            wait_until(lambda: directory.exists() and cleaner_checkpoint(log_dir, TOPIC) >= active_base(directory)
                       and active_base(directory) > log.entries[-1][0], 90, f"broker {broker_id} to compact")
        expected = latest(log.entries + filler.entries)
        for broker_id, log_dir in dirs.items():
            on_disk = entries_on_disk(log_dir / f"{TOPIC}-0")
            assert latest(on_disk) == expected, f"replica on broker {broker_id} lost or changed a key"
            assert len(on_disk) < len(log.entries) / 4, f"replica on broker {broker_id} was not compacted"
        leader = cluster.leader_of(TOPIC)
        cluster.kill(leader)
        cluster.wait_for(lambda: cluster.leader_of(TOPIC) not in (leader, -1), "a new leader")
        assert latest(read_all(cluster.bootstrap, TOPIC)) == expected
