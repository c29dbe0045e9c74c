"""A broker stopped by controlled shutdown leaves every ISR, and idle partitions do not take it back."""

from __future__ import annotations

import time

from broker_core.cluster.zk.znodes.topics import TopicPartitionStateZNode
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.controlled_shutdown import ControlledShutdownRequest
from tests.support.admin_requests import create_topic, produce_one
from tests.support.cluster import ClusterForTests
from tests.support.controller_requests import call

PARTITIONS = 6
# Long enough for followers' in-flight fetches and the leaders' ISR checks to have run several times.
STAYS_OUT_S = 8.0
SETTLE_S = 1.0


def _isrs(cluster: ClusterForTests, topic: str) -> dict[int, tuple[int, ...]]:
    states = {}
    for index in range(PARTITIONS):
        data, _ = cluster.zk.get(TopicPartitionStateZNode.path(topic, index))
        states[index] = TopicPartitionStateZNode.decode(topic, index, data).isr
    return states


def _naming(isrs: dict[int, tuple[int, ...]], broker_id: int) -> dict[int, tuple[int, ...]]:
    return {index: isr for index, isr in isrs.items() if broker_id in isr}


def _drops_and_stays_out(cluster: ClusterForTests, topic: str, broker_id: int) -> None:
    """No ISR names the broker within a bounded wait, and none does again for :data:`STAYS_OUT_S`.

    A fetch already on its way when the broker left may add it back for the
    moment it takes the controller to take it out again (a new leader epoch
    that fences its later fetches): the watch starts once that has settled.
    """
    for _ in range(2):
        cluster.wait_for(lambda: not _naming(_isrs(cluster, topic), broker_id),
                         f"the ISRs to drop broker {broker_id}", timeout=30.0)
        time.sleep(SETTLE_S)
    deadline = time.monotonic() + STAYS_OUT_S
    while time.monotonic() < deadline:
        assert _naming(_isrs(cluster, topic), broker_id) == {}
        time.sleep(0.2)


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

    _drops_and_stays_out(cluster, topic, stopped)


def test_a_broker_that_keeps_fetching_after_asking_to_shut_down_stays_out_of_the_isrs(healthy: ClusterForTests,
                                                                                     topic_name) -> None:
    """The widest form of the race: the leaving broker keeps running (and following what it led) for long."""
    cluster, topic = healthy, topic_name()
    controller = cluster.controller_id()
    leaving = next(b for b in (3, 2, 1) if b != controller)
    assert create_topic(cluster.address(controller), topic, partitions=PARTITIONS,
                        replication_factor=3).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    assert any(cluster.leader_of(topic, index) == leaving for index in range(PARTITIONS))

    # What a broker's SIGTERM sends first; this one does not stop afterwards.
    asked = call(cluster.address(controller), ApiKey.CONTROLLED_SHUTDOWN, 3,
                 ControlledShutdownRequest(broker_id=leaving, broker_epoch=-1))
    assert asked.error_code == ErrorCode.NONE and asked.remaining_partitions == []

    _drops_and_stays_out(cluster, topic, leaving)
    assert cluster.stop(leaving) == 0
    assert _naming(_isrs(cluster, topic), leaving) == {}
