"""One real ZooKeeper per test module; each test gets its own chroot."""

from __future__ import annotations

import pytest

from tests.support.zookeeper import ZooKeeperForTests


@pytest.fixture
def zk_chroot(zookeeper: ZooKeeperForTests) -> str:
    return zookeeper.new_chroot()
