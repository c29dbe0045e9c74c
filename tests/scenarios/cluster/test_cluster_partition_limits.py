"""Partition limits in a three-broker cluster: max.partitions counts every broker's topics together.

The tests run in file order: the last one fills the cluster up to max.partitions.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import create_partitions, create_topic
from tests.support.cluster import ClusterForTests, running_cluster
from tests.support.zookeeper import ZooKeeperForTests

E = ErrorCode
MAX_PARTITIONS = 40
MAX_BROKER_PARTITIONS = 20


@pytest.fixture(scope="module")
def limited(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    overrides = {"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
                 "max.partitions": str(MAX_PARTITIONS), "max.broker.partitions": str(MAX_BROKER_PARTITIONS)}
    with running_cluster(tmp_path_factory.mktemp("limited"), zookeeper, brokers=3, overrides=overrides) as running:
        running.wait_for(running.controller_id, "a controller to be elected")
        running.wait_for_metadata()
        yield running


def total_partitions(cluster: ClusterForTests, broker_id: int) -> int:
    return sum(len(t.partitions) for t in cluster.metadata(broker_id).topics)


def test_max_broker_partitions_bounds_the_replicas_of_each_broker(limited: ClusterForTests, topic_name) -> None:
    hosted = {b: 0 for b in limited.live_ids()}
    for t in limited.metadata(1).topics:
        for p in t.partitions:
            for replica in p.replica_nodes:
                hosted[replica] += 1
    free = sum(MAX_BROKER_PARTITIONS - n for n in hosted.values())
    refused = create_topic(limited.address(1), topic_name(), partitions=free // 3 + 1, replication_factor=3)
    assert refused.error_code == E.POLICY_VIOLATION
    assert f"max.broker.partitions={MAX_BROKER_PARTITIONS}" in refused.error_message


def test_max_partitions_counts_the_topics_created_through_other_brokers(limited: ClusterForTests,
                                                                        topic_name) -> None:
    first, other, second = topic_name("first"), topic_name("other"), topic_name("second")
    room = MAX_PARTITIONS - total_partitions(limited, 1)
    assert create_topic(limited.address(1), first, partitions=room // 2).error_code == E.NONE
    assert create_topic(limited.address(3), other, partitions=room - room // 2 - 2).error_code == E.NONE
    limited.wait_for_metadata([first, other])
    refused = create_topic(limited.address(2), second, partitions=3)
    assert refused.error_code == E.POLICY_VIOLATION
    assert f"max.partitions={MAX_PARTITIONS}" in refused.error_message
    assert create_topic(limited.address(3), second, partitions=3, validate_only=True).error_code == (
        E.POLICY_VIOLATION
    )
    assert create_partitions(limited.address(3), first, room // 2 + 3).error_code == E.POLICY_VIOLATION
    assert create_topic(limited.address(2), second, partitions=2).error_code == E.NONE
    limited.wait_for_metadata([second])  # every broker learns of it from the controller, not at once


def test_absurd_counts_are_refused_at_once_by_any_broker(limited: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    for broker_id in limited.live_ids():
        started = time.monotonic()
        result = create_topic(limited.address(broker_id), topic, partitions=2**31 - 1, replication_factor=3)
        assert result.error_code == E.INVALID_PARTITIONS and time.monotonic() - started < 2.0
    assert topic not in {t.name for t in limited.metadata(1).topics}
