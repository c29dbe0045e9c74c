"""The controller office under faults: a killed controller is replaced in time, a stale one is refused,
and a ZooKeeper restart under a running cluster loses nothing.

This module runs its own ZooKeeper and cluster: the ZooKeeper restart would
disturb the shared ones of the other cluster modules.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import create_topic, produce_one
from tests.support.cluster import BROKER_SESSION_TIMEOUT_MS, ClusterForTests, settled_cluster
from tests.support.controller_requests import FakeController, PartitionSpec, send_leader_and_isr
from tests.support.zookeeper import ZooKeeperForTests

E = ErrorCode


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    with settled_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3,
                         overrides={"offsets.topic.num.partitions": "3",
                                    "transaction.state.log.num.partitions": "3"}) as running:
        yield running


def _controller_epoch(cluster: ClusterForTests) -> int:
    data, _ = cluster.zk.get("/controller_epoch")
    return int(data)


def test_a_sigkilled_controller_is_replaced_within_the_session_timeout_and_rejoins_as_a_broker(
    cluster: ClusterForTests, topic_name
) -> None:
    old, epoch = cluster.controller_id(), _controller_epoch(cluster)
    killed_at = time.monotonic()
    cluster.kill(old)
    new = cluster.wait_for(lambda: (c := cluster.controller_id()) not in (None, old) and c, "a new controller",
                           timeout=BROKER_SESSION_TIMEOUT_MS / 1000 + 10)
    took = time.monotonic() - killed_at
    print(f"controller {old} SIGKILLed; broker {new} became controller after {took:.1f} s "
          f"(session timeout {BROKER_SESSION_TIMEOUT_MS / 1000:.0f} s)")
    assert took < BROKER_SESSION_TIMEOUT_MS / 1000 + 1
    assert _controller_epoch(cluster) == epoch + 1
    survivor = cluster.live_ids()[0]
    cluster.wait_for(lambda: cluster.metadata(survivor).controller_id == new, "metadata to name the new controller")
    topic = topic_name()
    assert create_topic(cluster.address(survivor), topic, partitions=3).error_code == E.NONE
    cluster.restart(old, clean=False)
    cluster.wait_for_metadata([topic])
    assert cluster.controller_id() == new, "the old controller rejoins as a plain broker"
    cluster.wait_for(lambda: cluster.metadata(old).controller_id == new, "the old controller to learn the new one")
    comeback = topic_name()
    assert create_topic(cluster.address(old), comeback, assignment={0: [old]}).error_code == E.NONE
    cluster.wait_for_metadata([comeback])
    assert produce_one(cluster.address(old), comeback).error_code == E.NONE


def test_brokers_refuse_a_controller_with_an_older_epoch(cluster: ClusterForTests, topic_name) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, assignment={0: [1]}).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    stale = FakeController(controller_id=cluster.controller_id(), epoch=_controller_epoch(cluster) - 1)
    body = stale.leader_and_isr([PartitionSpec(topic, 0, leader=1, leader_epoch=99)])
    assert send_leader_and_isr(cluster.address(1), body).error_code == E.STALE_CONTROLLER_EPOCH
    assert cluster.metadata(1, [topic]).topics[0].partitions[0].leader_epoch < 99
    assert produce_one(cluster.address(1), topic).error_code == E.NONE


def test_a_zookeeper_restart_under_a_running_cluster_loses_nothing(
    cluster: ClusterForTests, zookeeper: ZooKeeperForTests, topic_name
) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=3).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    for partition in range(3):
        assert produce_one(cluster.address(cluster.leader_of(topic, partition)), topic,
                           partition=partition).error_code == E.NONE
    zookeeper.server.stop()
    time.sleep(1.0)
    zookeeper.server.start()
    cluster.wait_for(lambda: cluster.registered_ids() == [1, 2, 3], "every broker to be registered again")
    cluster.wait_for(cluster.controller_id, "a controller")
    cluster.wait_for_metadata([topic])
    for partition in range(3):
        assert produce_one(cluster.address(cluster.leader_of(topic, partition)), topic,
                           partition=partition).error_code == E.NONE
    after = topic_name()
    assert create_topic(cluster.address(2), after, partitions=3).error_code == E.NONE
    cluster.wait_for_metadata([after])
