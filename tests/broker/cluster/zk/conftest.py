"""One real ZooKeeper per test module; each test gets its own chroot."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory) -> Iterator[ZooKeeperForTests]:
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as harness:
        yield harness


@pytest.fixture
def zk_chroot(zookeeper: ZooKeeperForTests) -> str:
    return zookeeper.new_chroot()
