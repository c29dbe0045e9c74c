"""A three-broker cluster per test module, with ZooKeeper and a real controller elected among the brokers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import ClusterForTests, running_cluster
from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory) -> Iterator[ZooKeeperForTests]:
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as harness:
        yield harness


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3,
                         overrides={"offsets.topic.num.partitions": "3",
                                    "transaction.state.log.num.partitions": "3",
                                    "replica.fetch.backoff.ms": "200"}) as running:
        running.wait_for(running.controller_id, "a controller to be elected")
        running.wait_for_metadata()
        yield running


@pytest.fixture
def healthy(cluster: ClusterForTests) -> Iterator[ClusterForTests]:
    """The cluster, with every broker running again after the test (killed or stopped ones restarted)."""
    yield cluster
    for broker_id, broker in cluster.brokers.items():
        if broker.exit_code is not None:
            cluster.restart(broker_id)
    cluster.wait_for_metadata()
