"""A broker stopped by controlled shutdown leaves every ISR, and idle partitions do not take it back."""

from __future__ import annotations

import time

from broker_core.cluster.zk.znodes.topics import TopicPartitionStateZNode
from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import create_topic, produce_one
from tests.support.cluster import ClusterForTests

PARTITIONS = 6
# Long enough for followers' in-flight fetches and the leaders' ISR checks to have run several times.
STAYS_OUT_S = 8.0


def _isrs(cluster: ClusterForTests, topic: str) -> dict[int, tuple[int, ...]]:
    states = {}
    for index in range(PARTITIONS):
        data, _ = cluster.zk.get(TopicPartitionStateZNode.path(topic, index))
        states[index] = TopicPartitionStateZNode.decode(topic, index, data).isr
    return states


def _naming(isrs: dict[int, tuple[int, ...]], broker_id: int) -> dict[int, tuple[int, ...]]:
    return {index: isr for index, isr in isrs.items() if broker_id in isr}


def test_a_stopped_broker_leaves_the_isrs_of_idle_partitions_and_stays_out(healthy: ClusterForTests,
                                                                          topic_name) -> None:
    cluster, topic = healthy, topic_name()
    stopped = next(b for b in (3, 2, 1) if b != cluster.controller_id())
    survivor = next(b for b in cluster.live_ids() if b != stopped)
    assert create_topic(cluster.address(survivor), topic, partitions=PARTITIONS,
                        replication_factor=3).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    cluster.wait_for(lambda: all(len(isr) == 3 for isr in _isrs(cluster, topic).values()),
                     "every replica to join the ISRs")
    # One record per partition on the way (the same holds for empty ones); then the partitions stay idle.
    for index in range(PARTITIONS):
        leader = cluster.leader_of(topic, index)
        assert produce_one(cluster.address(leader), topic, partition=index).error_code == ErrorCode.NONE

    assert cluster.stop(stopped) == 0

    cluster.wait_for(lambda: not _naming(_isrs(cluster, topic), stopped),
                     f"the ISRs to drop broker {stopped}", timeout=30.0)
    deadline = time.monotonic() + STAYS_OUT_S
    while time.monotonic() < deadline:
        assert _naming(_isrs(cluster, topic), stopped) == {}
        time.sleep(0.2)
