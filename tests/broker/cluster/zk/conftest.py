"""One real ZooKeeper per test module; each test gets its own chroot."""

from __future__ import annotations

from typing import Iterator

import pytest

from broker_core.cluster.zk.client import ZkClientConfig
from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory) -> Iterator[ZooKeeperForTests]:
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as harness:
        yield harness


@pytest.fixture
def zk_chroot(zookeeper: ZooKeeperForTests) -> str:
    return zookeeper.new_chroot()


@pytest.fixture
def zk_config(zookeeper: ZooKeeperForTests, zk_chroot: str) -> ZkClientConfig:
    return zookeeper.client_config(zk_chroot)
