"""A three-broker cluster per test module, with ZooKeeper and a real controller elected among the brokers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import ClusterForTests, restart_stopped_brokers, settled_cluster
from tests.support.zookeeper import ZooKeeperForTests


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    with settled_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3,
                         overrides={"offsets.topic.num.partitions": "6",
                                    "transaction.state.log.num.partitions": "6"}) as running:
        yield running


@pytest.fixture
def healthy(cluster: ClusterForTests) -> Iterator[ClusterForTests]:
    """The cluster, with every broker running again after the test (killed or stopped ones restarted)."""
    yield cluster
    restart_stopped_brokers(cluster)
