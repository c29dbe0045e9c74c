"""Brokers joining and leaving a cluster: controlled shutdown, crashes, controller failover, duplicate ids."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from spate.protocol.errors import ErrorCode  # noqa: E402
from tests.support.admin_requests import create_topic, produce_one  # noqa: E402
from tests.support.broker_process import BrokerProcess  # noqa: E402
from tests.support.cluster import ClusterForTests  # noqa: E402

E = ErrorCode


def test_sigterm_stops_a_broker_promptly_and_withdraws_it(healthy: ClusterForTests, topic_name) -> None:
    cluster, topic = healthy, topic_name()
    assert create_topic(cluster.address(1), topic, assignment={0: [2]}).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    started = time.monotonic()
    assert cluster.stop(2) == 0
    # With one replica nothing can move, so the controller has nothing left to wait for.
    assert time.monotonic() - started < 20
    assert not cluster.registered(2)
    cluster.wait_for(lambda: cluster.metadata(1, [topic]).topics[0].partitions[0].leader_id == -1,
                     "the partition to go offline")
    cluster.restart(2)
    cluster.wait_for_metadata([topic])
    assert produce_one(cluster.address(2), topic).error_code == E.NONE


def test_a_killed_controller_is_replaced(healthy: ClusterForTests, topic_name) -> None:
    cluster = healthy
    old = cluster.controller_id()
    cluster.kill(old)
    new = cluster.wait_for(lambda: (c := cluster.controller_id()) not in (None, old) and c, "a new controller")
    survivor = next(i for i in cluster.live_ids())
    cluster.wait_for(lambda: cluster.metadata(survivor).controller_id == new, "brokers to learn the new controller")
    topic = topic_name()
    assert create_topic(cluster.address(survivor), topic, partitions=2).error_code == E.NONE


def test_a_crashed_broker_leads_its_partitions_again_after_restart(healthy: ClusterForTests, topic_name) -> None:
    cluster, topic = healthy, topic_name()
    assert create_topic(cluster.address(1), topic, assignment={0: [3]}).error_code == E.NONE
    cluster.wait_for_metadata([topic])
    assert produce_one(cluster.address(3), topic).error_code == E.NONE
    cluster.restart(3, clean=False)
    cluster.wait_for_metadata([topic])
    assert produce_one(cluster.address(3), topic).error_code == E.NONE


def test_a_second_broker_with_a_live_id_exits_and_the_first_keeps_serving(cluster: ClusterForTests,
                                                                        tmp_path: Path) -> None:
    twin = BrokerProcess(tmp_path / "twin", overrides={"zookeeper.connect": cluster.connect, "broker.id": "2"})
    with pytest.raises(RuntimeError):
        twin.start(timeout=60)
    assert twin.log_tail().splitlines()[-1] == "spate: broker id 2 is already registered by a live broker"
    cluster.broker(2).check_alive()
    assert cluster.registered(2)
