"""The Spark compaction job on a 3-broker cluster: every replica of a partition takes the same plan and
cleans its own log with it, so the followers shrink with the leader and keep the same records below their
cleaner checkpoints; a follower left behind is planned for from its own checkpoint by the next run; a
follower that becomes leader serves the compacted log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from jobs.compaction import CompactionConfig, compact
from spate.client.admin.clean_plans import CleanPlanClient
from spate.structs import TopicPartition
from tests.scenarios.compaction.changelog import (
    Changelog,
    entries_on_disk,
    read_all,
    wait_until,
    write_changelog,
)
from tests.scenarios.compaction.test_changelog_compaction import cleaner_checkpoint
from tests.support.cluster import ClusterForTests, restart_stopped_brokers, settled_cluster
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]

TOPIC_CONFIG = {"cleanup.policy": "compact", "spate.compaction.planner": "spark", "segment.bytes": "131072",
                "min.cleanable.dirty.ratio": "0.01", "min.insync.replicas": "2"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    overrides = {"offsets.topic.num.partitions": "1", "transaction.state.log.num.partitions": "1",
                 "replica.fetch.backoff.ms": "200"}
    with settled_cluster(tmp_path_factory.mktemp("compaction-cluster"), zookeeper, brokers=3,
                         overrides=overrides) as running:
        yield running


def replicated_changelog(cluster: ClusterForTests, topic: str, *, records: int, keys: int) -> Changelog:
    """A compacted topic of one partition on all three brokers, filled and caught up on every replica."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 3, config=TOPIC_CONFIG)])[topic].result(30)
    cluster.wait_for_metadata([topic])
    log = write_changelog(cluster.bootstrap, topic, records=records, keys=keys, delete_share=0.05, acks="all")
    # Other keys roll the changelog's last segment out of the active one.
    log.entries += write_changelog(cluster.bootstrap, topic, records=3_000, keys=5, key_prefix="filler", seed=3,
                                   acks="all").entries
    log.entries.sort()
    tp = TopicPartition(topic, 0)

    def caught_up() -> bool:
        with CleanPlanClient(cluster.bootstrap) as plans:
            states = plans.describe_replicas([tp])[tp]
        marks = {getattr(state, "high_watermark", -1) for state in states.values()}
        return len(states) == 3 and len(marks) == 1 and marks != {-1}

    wait_until(caught_up, 60, f"every replica of {topic} to reach the high watermark")
    return log


def replica_dirs(cluster: ClusterForTests, topic: str) -> dict[int, Path]:
    return {broker_id: broker.log_dir for broker_id, broker in cluster.brokers.items()}


def compacted_below(entries: list, end: int) -> bool:
    """Whether ``entries`` (offset, key, value) hold at most one record per key below ``end``."""
    keys = [key for offset, key, _ in entries if offset < end]
    return len(keys) == len(set(keys))


def test_every_replica_takes_the_plan_and_keeps_the_same_records(spark, cluster: ClusterForTests) -> None:
    topic = "replicated-planned"
    log = replicated_changelog(cluster, topic, records=30_000, keys=300)
    dirs = replica_dirs(cluster, topic)
    before = {broker_id: len(entries_on_disk(d / f"{topic}-0")) for broker_id, d in dirs.items()}

    [report] = compact(spark, CompactionConfig(cluster.bootstrap, (topic,)))

    assert report.outcome == "compacted", report
    assert len(report.followers) == 2 and all("clean up to" in line for line in report.followers), report.line()
    end = report.clean_up_to
    assert end > 25_000
    on_disk = {broker_id: entries_on_disk(d / f"{topic}-0") for broker_id, d in dirs.items()}
    checkpoints = {broker_id: cleaner_checkpoint(d, topic) for broker_id, d in dirs.items()}
    for broker_id, entries in on_disk.items():
        clean_to = checkpoints[broker_id]
        assert clean_to > end * 0.9, f"broker {broker_id} cleaned only up to {clean_to} of {end}"
        assert compacted_below(entries, clean_to), f"broker {broker_id} keeps a key twice below {clean_to}"
        assert len(entries) < before[broker_id] / 4, f"broker {broker_id} was not compacted"
        assert {k: v for _, k, v in entries} == log.latest(), f"broker {broker_id} lost or changed a key"
    common = min(checkpoints.values())
    below = {broker_id: [e for e in entries if e[0] < common] for broker_id, entries in on_disk.items()}
    assert len({tuple(entries) for entries in below.values()}) == 1, "replicas differ below their checkpoints"


def test_a_follower_left_behind_is_planned_for_from_its_own_checkpoint(spark, cluster: ClusterForTests) -> None:
    topic = "follower-behind"
    log = replicated_changelog(cluster, topic, records=20_000, keys=200)
    tp = TopicPartition(topic, 0)
    with CleanPlanClient(cluster.bootstrap) as plans:
        # A job that died after the leader applied its plan: the followers never got it.
        [leader] = plans.describe([tp]).values()
        latest = {}
        for offset, key, _ in log.entries:
            if leader.first_dirty_offset <= offset < leader.clean_end_offset:
                latest[_md5(key)] = offset
        plans.apply(leader, latest)
    dirs = replica_dirs(cluster, topic)
    followers = [broker_id for broker_id in dirs if broker_id != leader.leader]
    assert all(cleaner_checkpoint(dirs[b], topic) == 0 for b in followers)

    [report] = compact(spark, CompactionConfig(cluster.bootstrap, (topic,)))

    assert report.outcome in ("compacted", "followers compacted"), report
    for broker_id in followers:
        clean_to = cleaner_checkpoint(dirs[broker_id], topic)
        assert clean_to >= leader.clean_end_offset * 0.9, f"broker {broker_id} is clean only up to {clean_to}"
        assert compacted_below(entries_on_disk(dirs[broker_id] / f"{topic}-0"), clean_to)


def test_a_follower_that_becomes_leader_serves_the_compacted_log(spark, cluster: ClusterForTests) -> None:
    topic = "planned-failover"
    log = replicated_changelog(cluster, topic, records=20_000, keys=200)
    [report] = compact(spark, CompactionConfig(cluster.bootstrap, (topic,)))
    assert report.outcome == "compacted", report
    end = report.clean_up_to
    leader = cluster.leader_of(topic)

    cluster.kill(leader)
    try:
        cluster.wait_for(lambda: cluster.leader_of(topic) not in (leader, -1), "a follower to lead")
        read = read_all(cluster.bootstrap, topic)
        written = {offset: (key, value) for offset, key, value in log.entries}
        assert all(written[offset] == (key, value) for offset, key, value in read), "a record changed or moved"
        assert {key: value for _, key, value in read} == log.latest()
        assert compacted_below(read, end * 0.9), "the new leader serves records its plan removed"
    finally:
        restart_stopped_brokers(cluster)


def _md5(key: bytes) -> bytes:
    import hashlib

    return hashlib.md5(key, usedforsecurity=False).digest()
