"""Archiving topics in a three-broker cluster: every replica honours the archived offset, a new leader too.

The archived offset travels to every replica (ArchiveOffsets to each) and is
checkpointed in each log dir, so after the leader dies the new leader still
deletes only archived segments. No Spark here: the offsets are reported
with the client, as the archive job reports them after its Delta commit.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from spate.client import TopicPartition
from spate.client.admin.archive_offsets import ArchiveOffsetsClient
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.archive_offsets import DESCRIBE_ONLY, ArchiveOffsetsRequest
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests, settled_cluster
from tests.support.controller_requests import call
from tests.support.zookeeper import ZooKeeperForTests

DAY_MS = 86_400_000
Q = ArchiveOffsetsRequest


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    with settled_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3,
                         overrides={"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
                                    "log.retention.check.interval.ms": "200",
                                    "log.segment.delete.delay.ms": "0"}) as running:
        yield running


def produce_old(bootstrap: str, topic: str, first: int, count: int) -> None:
    """``count`` records stamped two days ago, acknowledged by every in-sync replica, in small batches."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "batch.num.messages": 10})
    failures: list[object] = []
    stamp = int(time.time() * 1000) - 2 * DAY_MS
    for n in range(first, first + count):
        producer.produce(topic, value=b"%05d" % n + b"." * 100, partition=0, timestamp=stamp,
                         on_delivery=lambda error, _: error and failures.append(error))
    assert producer.flush(30) == 0 and failures == []


def replica_view(cluster: ClusterForTests, broker_id: int, topic: str):
    """What broker ``broker_id`` (leader or follower) answers about partition 0."""
    body = Q(topics=[Q.ArchiveOffsetsTopic(name=topic, partitions=[
        Q.ArchiveOffsetsPartition(partition_index=0, archived_offset=DESCRIBE_ONLY)])])
    (answer,) = call(cluster.address(broker_id), ApiKey.SPATE_ARCHIVE_OFFSETS, 0, body).topics[0].partitions
    assert answer.error_code == 0, answer.error_message
    return answer


def test_every_replica_keeps_unarchived_segments_and_a_new_leader_still_does(cluster: ClusterForTests, unique):
    topic = unique("archived")
    configs = {"retention.ms": str(DAY_MS), "segment.bytes": "4096", "spate.archive.path": "/lake/archived",
               "min.insync.replicas": "2"}
    created = create_topic(cluster.address(cluster.controller_id()), topic, partitions=1, replication_factor=3,
                           configs=configs)
    assert created.error_code == 0
    cluster.wait_for_metadata([topic])
    produce_old(cluster.bootstrap, topic, 0, 150)

    time.sleep(1.5)  # several retention passes on every broker
    assert [replica_view(cluster, b, topic).log_start_offset for b in (1, 2, 3)] == [0, 0, 0]

    tp = TopicPartition(topic, 0)
    with ArchiveOffsetsClient(cluster.bootstrap) as client:
        target = client.describe([tp])[tp].archive_target_offset
        assert target > 0
        outcome = client.record({tp: target})
    assert outcome.recorded == {tp: target} and outcome.follower_failures == {}
    assert [replica_view(cluster, b, topic).archived_offset for b in (1, 2, 3)] == [target] * 3
    cluster.wait_for(lambda: all(replica_view(cluster, b, topic).log_start_offset == target for b in (1, 2, 3)),
                     "every replica to delete the archived segments", timeout=30)

    old_leader = cluster.leader_of(topic)
    cluster.kill(old_leader)
    cluster.wait_for(lambda: cluster.leader_of(topic) not in (old_leader, -1), "a new leader", timeout=60)
    new_leader = cluster.leader_of(topic)
    producer = Producer({"bootstrap.servers": cluster.address(new_leader), "acks": "1", "linger.ms": 5,
                         "batch.num.messages": 10})
    stamp = int(time.time() * 1000) - 2 * DAY_MS
    for n in range(150, 300):
        producer.produce(topic, value=b"%05d" % n + b"." * 100, partition=0, timestamp=stamp)
    assert producer.flush(30) == 0

    time.sleep(1.5)
    view = replica_view(cluster, new_leader, topic)
    assert view.is_leader and view.archived_offset == target
    assert view.archive_target_offset > target, "retention wants more than is archived"
    assert view.log_start_offset == target, "the new leader deleted segments that were never archived"
