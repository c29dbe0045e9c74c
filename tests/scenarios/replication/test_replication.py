"""Replication on a real three-broker cluster: every replica of an RF 3 topic holds the leader's log, and what
was acknowledged with acks=all survives the loss of the leader.

The followers' side (fetchers, truncation) is exercised end to end here;
the assertions that also need the leader's side (followers read to the
leader's log end, the high watermark moves with the ISR, acks=all waits for
it) are marked as expected to fail until that side is in.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka import TopicPartition as ConfluentPartition

from tests.support.admin_requests import create_topic
from tests.support.cluster import BROKER_SESSION_TIMEOUT_MS, ClusterForTests

PARTITIONS = 3
RECORDS = 300
SETTLE_S = 60.0


def replicated_topic(cluster: ClusterForTests, name: str) -> str:
    assert create_topic(cluster.address(1), name, partitions=PARTITIONS, replication_factor=3).error_code == 0
    cluster.wait_for_metadata([name])
    return name


def replicas_of(cluster: ClusterForTests, topic: str, partition: int) -> tuple[int, list[int], list[int]]:
    """(leader, replicas, isr) as a live broker's metadata shows them."""
    answer = cluster.metadata(cluster.live_ids()[0], [topic])
    found = next(p for p in answer.topics[0].partitions if p.partition_index == partition)
    return found.leader_id, list(found.replica_nodes), list(found.isr_nodes)


def log_bytes(cluster: ClusterForTests, broker_id: int, topic: str, partition: int) -> bytes:
    directory: Path = cluster.broker(broker_id).log_dir / f"{topic}-{partition}"
    return b"".join(path.read_bytes() for path in sorted(directory.glob("*.log"))) if directory.exists() else b""


def all_replicas_identical(cluster: ClusterForTests, topic: str, brokers: list[int] | None = None) -> bool:
    for partition in range(PARTITIONS):
        leader, replicas, _ = replicas_of(cluster, topic, partition)
        expected = log_bytes(cluster, leader, topic, partition)
        if any(log_bytes(cluster, r, topic, partition) != expected for r in (brokers or replicas)):
            return False
    return True


def produce_acknowledged(bootstrap: str, topic: str, count: int) -> set[bytes]:
    """Produce with acks=all (idempotent); the values the cluster acknowledged."""
    acknowledged: set[bytes] = set()

    def delivered(error, message) -> None:
        if error is None:
            acknowledged.add(message.value())

    producer = ConfluentProducer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "message.timeout.ms": 30000})
    for i in range(count):
        producer.produce(topic, key=str(i).encode(), value=b"r-%d" % i, on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(SETTLE_S) == 0
    return acknowledged


def consume_all(bootstrap: str, topic: str, expected: int) -> set[bytes]:
    consumer = ConfluentConsumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                                  "enable.auto.commit": False})
    consumer.assign([ConfluentPartition(topic, p, 0) for p in range(PARTITIONS)])
    values: set[bytes] = set()
    deadline = time.monotonic() + SETTLE_S
    try:
        while len(values) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.add(message.value())
    finally:
        consumer.close()
    return values


def test_every_replica_of_a_new_topic_hosts_it_and_holds_a_prefix_of_the_leaders_log(
    healthy: ClusterForTests, topic_name
) -> None:
    cluster = healthy
    topic = replicated_topic(cluster, topic_name())
    produce_acknowledged(cluster.address(2), topic, 30)
    for partition in range(PARTITIONS):
        leader, replicas, _ = replicas_of(cluster, topic, partition)
        assert sorted(replicas) == [1, 2, 3]
        for broker_id in replicas:
            assert (cluster.broker(broker_id).log_dir / f"{topic}-{partition}").is_dir()
        leader_log = log_bytes(cluster, leader, topic, partition)
        for follower in (r for r in replicas if r != leader):
            assert leader_log.startswith(log_bytes(cluster, follower, topic, partition))


def test_all_replicas_hold_the_leaders_log_byte_for_byte_and_consumers_read_everything(
    healthy: ClusterForTests, topic_name
) -> None:
    cluster = healthy
    topic = replicated_topic(cluster, topic_name())
    acknowledged = produce_acknowledged(cluster.address(1), topic, RECORDS)
    assert len(acknowledged) == RECORDS
    cluster.wait_for(lambda: all_replicas_identical(cluster, topic), "every replica to hold its leader's log", 30)
    assert consume_all(cluster.address(3), topic, RECORDS) == acknowledged
    for partition in range(PARTITIONS):
        _, replicas, isr = replicas_of(cluster, topic, partition)
        assert sorted(isr) == sorted(replicas)


def test_the_new_leader_has_everything_acknowledged_and_the_old_one_catches_up_on_return(
    healthy: ClusterForTests, topic_name
) -> None:
    cluster = healthy
    topic = replicated_topic(cluster, topic_name())
    acknowledged = produce_acknowledged(cluster.address(1), topic, RECORDS)
    old_leader, _, _ = replicas_of(cluster, topic, 0)
    cluster.kill(old_leader)
    cluster.wait_for(lambda: replicas_of(cluster, topic, 0)[0] not in (old_leader, -1), "a new leader",
                     BROKER_SESSION_TIMEOUT_MS / 1000 + SETTLE_S)
    cluster.wait_for_metadata([topic])
    survivors = cluster.live_ids()
    assert consume_all(cluster.address(survivors[0]), topic, len(acknowledged)) == acknowledged
    # More writes under the new leaders; the old leader returns, truncates what it alone had, and catches up.
    later = produce_acknowledged(cluster.address(survivors[0]), topic, 30)
    cluster.restart(old_leader, clean=False)
    cluster.wait_for_metadata([topic])
    cluster.wait_for(lambda: all_replicas_identical(cluster, topic), "the returning broker to catch up", SETTLE_S)
    assert consume_all(cluster.address(old_leader), topic, len(acknowledged | later)) == acknowledged | later
