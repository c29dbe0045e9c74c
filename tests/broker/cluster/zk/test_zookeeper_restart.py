"""ZooKeeper restarted under connected clients: they reconnect to the same session and carry on.

A standalone server keeps its sessions in its data directory, so a restart
shorter than the session timeout loses nothing: ephemeral znodes survive,
and clients set their watches again once reconnected.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from broker_core.cluster.metadata_store import BrokerRegistration, ChangeKind, MetadataChange
from broker_core.cluster.zk.client import SessionEvent, SessionState
from broker_core.cluster.zk.store import ZkMetadataStore
from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper, wait_until


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory) -> Iterator[ZooKeeperForTests]:
    # This module's own server: restarting it would disturb other modules' tests.
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper-restart")) as harness:
        yield harness


def test_a_client_rides_out_a_restart_with_its_session_and_ephemerals(zookeeper: ZooKeeperForTests) -> None:
    chroot = zookeeper.new_chroot()
    session = zookeeper.session(chroot)
    events: list[SessionEvent] = []
    session.add_listener(events.append)
    session.create("/ephemeral", b"alive", ephemeral=True)
    session_id = session.session_id

    zookeeper.server.restart()

    wait_until(lambda: session.connected and SessionState.SUSPENDED in [e.state for e in events], "a reconnection")
    wait_until(lambda: events[-1].state is SessionState.CONNECTED, "CONNECTED after the restart")
    assert events[-1] == SessionEvent(SessionState.CONNECTED, session_id, new_session=False)
    assert SessionState.LOST not in [event.state for event in events]
    assert session.get("/ephemeral")[0] == b"alive"


def test_a_store_keeps_its_registration_and_watches_across_a_restart(zookeeper: ZooKeeperForTests) -> None:
    chroot = zookeeper.new_chroot()
    config = zookeeper.client_config(chroot)
    broker = ZkMetadataStore.connect(config)
    observer = ZkMetadataStore.connect(config)
    try:
        broker.register_broker(BrokerRegistration(1, "h1", 9092))
        seen: list[MetadataChange] = []
        observer.watch(seen.append)

        zookeeper.server.restart()
        wait_until(lambda: broker.session.connected and observer.session.connected, "both stores to reconnect")

        assert observer.list_brokers() == [BrokerRegistration(1, "h1", 9092)]
        broker.create_topic("after-restart", {0: [1]})
        expected = MetadataChange(ChangeKind.TOPIC_CREATED, topic="after-restart", partitions=(0,))
        wait_until(lambda: expected in seen, "the watcher to hear a change made after the restart")
        # The registration never went away, so nobody heard it leave.
        assert MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=1) not in seen
    finally:
        broker.close()
        observer.close()
