"""The fault harness on real processes: isolation and pauses take effect and heal; the workload and checks run.

These check the tooling, not replication: the topic here has one replica.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.faults import (
    FaultCluster,
    IdempotentWorkload,
    broker_name,
    check_history,
    read_committed,
    running_fault_cluster,
)
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[FaultCluster]:
    with running_fault_cluster(tmp_path_factory.mktemp("faults"), zookeeper, brokers=3,
                               overrides={"offsets.topic.num.partitions": "3"}) as running:
        running.wait_for(running.controller_id, "a controller to be elected")
        running.wait_for_metadata()
        yield running


def a_broker_other_than_the_controller(cluster: FaultCluster) -> int:
    controller = cluster.wait_for(cluster.controller_id, "a controller")
    return next(i for i in cluster.live_ids() if i != controller)


def test_an_isolated_broker_leaves_the_cluster_yet_answers_clients_and_returns_when_healed(cluster) -> None:
    victim = a_broker_other_than_the_controller(cluster)
    others = [i for i in cluster.brokers if i != victim]
    with cluster.isolated(victim):
        cluster.wait_for(lambda: not cluster.registered(victim), f"broker {victim}'s session to expire")
        assert cluster.replication_proxies[others[0]].is_cut_off(broker_name(victim))
        assert cluster.replication_proxies[victim].is_cut_off(broker_name(others[1]))
        cluster.metadata(victim)  # its client listener still answers
    cluster.wait_for(lambda: cluster.registered(victim), f"broker {victim} to register again")
    cluster.wait_for_metadata()


def test_a_paused_broker_loses_its_session_and_registers_again_once_resumed(cluster) -> None:
    victim = a_broker_other_than_the_controller(cluster)
    cluster.pause(victim)
    try:
        assert victim not in cluster.live_ids() and cluster.paused_ids() == [victim]
        cluster.wait_for(lambda: not cluster.registered(victim), f"paused broker {victim}'s session to expire")
        cluster.wait_for_metadata()  # the others no longer list it
    finally:
        cluster.resume(victim)
    cluster.wait_for(lambda: cluster.registered(victim), f"broker {victim} to register again")
    cluster.wait_for_metadata()


def test_a_crashed_broker_restarts_behind_the_same_proxies(cluster) -> None:
    victim = a_broker_other_than_the_controller(cluster)
    before, _ = cluster.zk.get(f"/brokers/ids/{victim}")
    old_pid = cluster.pid(victim)
    cluster.restart(victim, clean=False)  # SIGKILL, wait for the old session to go, start again
    assert cluster.pid(victim) != old_pid
    cluster.wait_for(lambda: cluster.registered(victim), f"broker {victim} to register again")
    after, _ = cluster.zk.get(f"/brokers/ids/{victim}")
    assert json.loads(after)["endpoints"] == json.loads(before)["endpoints"]
    cluster.wait_for_metadata()


def test_the_workload_reads_back_everything_it_was_acknowledged(cluster, topic_name) -> None:
    topic = topic_name()
    cluster.create_topic(topic, partitions=3, replication_factor=1, configs={"min.insync.replicas": "1"})
    workload = IdempotentWorkload(cluster.address(1), topic, 3, rate=500, max_values=600).start()
    workload.wait_for_acks(300)
    history = workload.stop()
    assert history.sent <= 600 and not history.unresolved and history.fatal_error is None
    report = check_history(history, read_committed(cluster.address(2), topic, 3))
    assert report.ok, report.summary()
    assert report.acknowledged == history.sent == report.read
    for partition in range(3):
        assert cluster.replica_differences(topic, partition) == []
