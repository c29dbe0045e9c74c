"""A store's follower of /config/changes reloads after each notification and stops when closed."""

from __future__ import annotations

import threading

import pytest

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.config_change_follower import ConfigChangeFollower
from broker_core.cluster.zk.znodes import ConfigChangesZNode

pytestmark = pytest.mark.integration


def test_each_change_notification_reloads_until_closed(zookeeper) -> None:
    session = ZkSession(zookeeper.client_config(zookeeper.new_chroot()))
    session.start()
    reloads = threading.Semaphore(0)
    follower = ConfigChangeFollower(session, reloads.release, "test configs").start()
    try:
        # The znode may not exist yet: the follower waits for it to appear.
        session.ensure_path(ConfigChangesZNode.path())
        assert reloads.acquire(timeout=10), "no reload once /config/changes appeared"
        session.create(f"{ConfigChangesZNode.path()}/config_change_", sequence=True)
        assert reloads.acquire(timeout=10), "no reload after a notification"
    finally:
        follower.close()
        session.close()
    assert not reloads.acquire(timeout=0.5)
