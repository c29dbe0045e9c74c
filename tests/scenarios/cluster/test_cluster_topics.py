"""Topics on a three-broker cluster: created, used and deleted through any broker, answered once applied."""

from __future__ import annotations

import json  # noqa: E402

from spate.client import Consumer, Producer  # noqa: E402
from spate.protocol.errors import ErrorCode  # noqa: E402
from spate.structs import TopicPartition  # noqa: E402
from tests.support.admin_requests import (  # noqa: E402
    alter_reassignments,
    create_partitions,
    create_topic,
    delete_topic,
    describe_cluster,
    describe_topic_configs,
    elect_preferred_leaders,
    election_errors,
    find_group_coordinator,
    incremental_alter_configs,
)
from tests.support.cluster import ClusterForTests  # noqa: E402

E = ErrorCode
OP_SET = 0


def test_every_broker_is_a_bootstrap_server(cluster: ClusterForTests) -> None:
    controller = cluster.controller_id()
    for broker_id in cluster.live_ids():
        answer = cluster.metadata(broker_id)
        assert {b.node_id for b in answer.brokers} == {1, 2, 3}
        assert answer.controller_id == controller
        assert describe_cluster(cluster.address(broker_id)).controller_id == controller


def test_a_topic_created_through_any_broker_has_leaders_when_answered(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    result = create_topic(cluster.address(3), topic, partitions=6, replication_factor=1)
    assert result.error_code == E.NONE
    answer = cluster.metadata(3, [topic])
    assert [p.error_code for p in answer.topics[0].partitions] == [E.NONE] * 6
    assert {p.leader_id for p in answer.topics[0].partitions} == {1, 2, 3}
    assert create_topic(cluster.address(1), topic, partitions=1).error_code == E.TOPIC_ALREADY_EXISTS


def test_records_produced_through_the_cluster_are_consumed_back(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=6).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    producer = Producer(cluster.bootstrap, acks="all")
    try:
        for i in range(60):
            producer.send(topic, value=f"v{i}".encode(), key=f"k{i}".encode())
        producer.flush(30)
    finally:
        producer.close()
    consumer = Consumer(cluster.bootstrap, auto_offset_reset="earliest")
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(6)])
        seen: set[bytes] = set()
        cluster.wait_for(lambda: seen.update(r.value for r in consumer.poll(500)) or len(seen) == 60,
                         "every record to be consumed")
    finally:
        consumer.close()


def test_groups_find_one_coordinator_through_any_broker(cluster: ClusterForTests) -> None:
    def coordinator(broker_id: int) -> int | None:
        found = find_group_coordinator(cluster.address(broker_id), "cluster-group")
        return found.node_id if found.error_code == E.NONE else None

    first = cluster.wait_for(lambda: coordinator(1), "the group coordinator")
    for broker_id in (2, 3):
        assert cluster.wait_for(lambda: coordinator(broker_id), "the group coordinator") == first


def test_deleting_a_topic_removes_its_data_on_every_broker(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(2), topic, assignment={0: [1], 1: [2], 2: [3]}).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    for broker_id in (1, 2, 3):
        assert (cluster.broker(broker_id).log_dir / f"{topic}-{broker_id - 1}").is_dir()
    assert delete_topic(cluster.address(1), topic) == E.NONE
    assert cluster.metadata(1, [topic]).topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    for broker_id in (1, 2, 3):
        path = cluster.broker(broker_id).log_dir / f"{topic}-{broker_id - 1}"
        cluster.wait_for(lambda: not path.exists(), f"{path} to be deleted")
    cluster.wait_for(lambda: cluster.zk.exists(f"/brokers/topics/{topic}") is None, "the topic znode to go")


def test_a_topic_deleted_while_a_broker_is_down_is_deleted_there_when_it_returns(
    healthy: ClusterForTests, topic_name
) -> None:
    cluster, topic = healthy, topic_name()
    assert create_topic(cluster.address(1), topic, assignment={0: [3], 1: [1]}).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    cluster.kill(3)
    cluster.wait_for(lambda: not cluster.registered(3), "broker 3's registration to expire")
    assert delete_topic(cluster.address(1), topic, timeout_ms=2000) in (E.NONE, E.REQUEST_TIMED_OUT)
    stale = cluster.broker(3).log_dir / f"{topic}-0"
    assert stale.is_dir()
    cluster.restart(3)
    cluster.wait_for(lambda: not stale.exists(), "the returning broker to delete the topic's log")
    cluster.wait_for(lambda: cluster.metadata(3, [topic]).topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION,
                     "the topic to be gone")


def test_partitions_added_through_any_broker_get_leaders(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=2).error_code == E.NONE
    assert create_partitions(cluster.address(2), topic, 5).error_code == E.NONE
    answer = cluster.metadata(2, [topic])
    assert [(p.partition_index, p.error_code) for p in answer.topics[0].partitions] == [(p, E.NONE) for p in range(5)]


def test_bad_admin_arguments_get_kafkas_error_codes(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    too_many = create_topic(cluster.address(1), topic, partitions=1, replication_factor=4)
    assert too_many.error_code == E.INVALID_REPLICATION_FACTOR
    unknown = create_topic(cluster.address(1), topic, assignment={0: [1, 42]})
    assert unknown.error_code == E.INVALID_REPLICA_ASSIGNMENT
    assert create_topic(cluster.address(1), topic, partitions=1).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    tp = TopicPartition(topic, 0)
    assert alter_reassignments(cluster.address(2), {tp: [42]}) == {tp: E.INVALID_REPLICA_ASSIGNMENT}
    assert alter_reassignments(cluster.address(2), {tp: None}) == {tp: E.NO_REASSIGNMENT_IN_PROGRESS}
    assert election_errors(elect_preferred_leaders(cluster.address(3), [tp])) == {tp: E.ELECTION_NOT_NEEDED}


def test_a_config_change_through_one_broker_is_seen_through_another(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=1).error_code == E.NONE
    assert incremental_alter_configs(cluster.address(2), topic, [("retention.ms", OP_SET, "4242")]).error_code == E.NONE
    configs = {c.name: c.value for c in describe_topic_configs(cluster.address(3), topic).configs}
    assert configs["retention.ms"] == "4242"


def test_a_malformed_topic_znode_leaves_the_cluster_serving(cluster: ClusterForTests, topic_name) -> None:
    cluster.zk.create("/brokers/topics/hand-written", json.dumps({"version": 3, "partitions": "x"}).encode())
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=3).error_code == E.NONE
    for broker in cluster.brokers.values():
        broker.check_alive()


def test_a_consumer_group_reads_a_topic_spread_over_the_cluster(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=6).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    producer = Producer(cluster.bootstrap)
    try:
        for i in range(30):
            producer.send(topic, value=f"v{i}".encode(), key=f"k{i}".encode())
        producer.flush(30)
    finally:
        producer.close()
    consumer = Consumer(cluster.bootstrap, group_id=topic_name("group"), auto_offset_reset="earliest")
    try:
        consumer.subscribe([topic])
        seen: set[bytes] = set()
        cluster.wait_for(lambda: seen.update(r.value for r in consumer.poll(500)) or len(seen) == 30,
                         "the group to consume every record")
    finally:
        consumer.close()
