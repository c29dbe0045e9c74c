"""ZkSession: chroot creation, bounded waits and retries, typed session events."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from kazoo.exceptions import ConnectionLoss

from broker_core.cluster.zk.client import RetryPolicy, SessionEvent, SessionState, ZkClientConfig, ZkSession
from broker_core.cluster.zk.errors import ZooKeeperAuthenticationError, ZooKeeperUnavailableError
from broker_core.cluster.zk.zk_sasl import login_from_jaas_file
from tests.support.ports import free_port
from tests.support.zookeeper import ZooKeeperForTests, expire_session, wait_until, write_client_jaas


def test_connecting_creates_the_chroot_and_roots_every_path_there(zookeeper: ZooKeeperForTests) -> None:
    chroot = zookeeper.new_chroot() + "/nested/deeper"
    session = zookeeper.session(chroot)
    session.create("/inside", b"x")
    root = zookeeper.session()
    assert root.get(f"{chroot}/inside")[0] == b"x"
    assert session.get_children("/") == ["inside"]


def test_listeners_hear_connected_on_a_new_session_then_lost_on_close(zookeeper: ZooKeeperForTests) -> None:
    events: list[SessionEvent] = []
    threads: set[str] = set()

    def listener(event: SessionEvent) -> None:
        events.append(event)
        threads.add(threading.current_thread().name)

    session = ZkSession(zookeeper.client_config(zookeeper.new_chroot()))
    session.add_listener(listener)
    session.start()
    wait_until(lambda: events, "the CONNECTED event")
    assert events[0] == SessionEvent(SessionState.CONNECTED, session.session_id, new_session=True)
    session.close()
    assert events[-1].state is SessionState.LOST
    assert threads == {"zk-session-events"}


def test_a_listener_may_call_zookeeper(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    seen: list[object] = []
    session = ZkSession(zookeeper.client_config(zk_chroot))

    def listener(event: SessionEvent) -> None:
        if event.state is SessionState.CONNECTED:
            seen.append(session.exists("/"))

    session.add_listener(listener)
    session.start()
    try:
        wait_until(lambda: seen, "the listener's ZooKeeper call")
        assert seen[0] is not None
    finally:
        session.close()


def test_an_expired_session_is_lost_then_replaced_by_a_new_one(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    events: list[SessionEvent] = []
    session = zookeeper.session(zk_chroot)
    session.add_listener(events.append)
    first_id = session.session_id
    session.create("/mine", ephemeral=True)
    expire_session(zookeeper, session)
    wait_until(lambda: session.exists("/") is not None and session.session_id not in (None, first_id), "a new session")
    wait_until(lambda: any(e.state is SessionState.CONNECTED and e.new_session for e in events), "CONNECTED(new)")
    assert SessionState.LOST in [event.state for event in events]
    assert session.exists("/mine") is None  # the ephemeral went with the old session


def test_connecting_to_nothing_fails_within_the_connection_timeout() -> None:
    config = ZkClientConfig.of(f"127.0.0.1:{free_port()}", connection_timeout_ms=300)
    session = ZkSession(config)
    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailableError, match=r"cannot connect to ZooKeeper at 127\.0\.0\.1:\d+ within 300 ms"):
        session.start()
    assert time.monotonic() - started < 5
    session.close()


def test_retries_are_bounded_in_attempts(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    session = zookeeper.session(zk_chroot, retry=RetryPolicy(max_attempts=3, initial_backoff_ms=1, max_backoff_ms=1))
    calls = []

    def always_lost() -> None:
        calls.append(1)
        raise ConnectionLoss()

    with pytest.raises(ZooKeeperUnavailableError, match="no answer"):
        session.retry(always_lost)
    assert len(calls) == 3


def test_retries_are_bounded_in_time(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    policy = RetryPolicy(max_attempts=1000, initial_backoff_ms=20, max_backoff_ms=20, deadline_ms=200)
    session = zookeeper.session(zk_chroot, retry=policy)

    def always_lost() -> None:
        raise ConnectionLoss()

    started = time.monotonic()
    with pytest.raises(ZooKeeperUnavailableError):
        session.retry(always_lost)
    assert time.monotonic() - started < 2


def test_a_retried_write_learns_that_its_lost_try_may_have_landed(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    session = zookeeper.session(zk_chroot, retry=RetryPolicy(initial_backoff_ms=1))
    seen: list[bool] = []

    def attempt(retrying: bool) -> str:
        seen.append(retrying)
        if len(seen) == 1:
            raise ConnectionLoss()
        return "done"

    assert session.retry_write(attempt) == "done"
    assert seen == [False, True]


def test_a_closed_session_refuses_work_at_once(zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    session = zookeeper.session(zk_chroot)
    session.close()
    with pytest.raises(ZooKeeperUnavailableError, match="closed"):
        session.get_children("/")


def test_a_sasl_login_to_a_server_without_sasl_fails_within_the_session_timeout(
    zookeeper: ZooKeeperForTests, tmp_path: Path
) -> None:
    login = login_from_jaas_file(write_client_jaas(tmp_path / "jaas.conf", "kafka", "kafka-secret"))
    started = time.monotonic()
    with pytest.raises(ZooKeeperAuthenticationError, match="and that the server enables SASL"):
        zookeeper.session(sasl=login, session_timeout_ms=2000)
    assert time.monotonic() - started < 8


def test_a_batched_read_keeps_at_most_max_in_flight_requests_outstanding(
    zookeeper: ZooKeeperForTests, zk_chroot: str
) -> None:
    session = zookeeper.session(zk_chroot, max_in_flight_requests=3)
    for i in range(7):
        session.create(f"/n{i}", b"%d" % i)
    outstanding: list[int] = []
    unread: set[int] = set()
    send = session._client.get_async

    class Tracked:
        def __init__(self, result, key: int) -> None:
            self.result, self.key = result, key

        def get(self, timeout=None):
            unread.discard(self.key)
            return self.result.get(timeout=timeout)

    def tracked_get(path, *args, **kwargs):
        outstanding.append(len(unread))
        key = len(outstanding)
        unread.add(key)
        return Tracked(send(path, *args, **kwargs), key)

    session._client.get_async = tracked_get
    paths = [f"/n{i}" for i in range(7)] + ["/missing"]
    found = session.get_many(paths)
    assert {path: (value[0] if value else None) for path, value in found.items()} == {
        **{f"/n{i}": b"%d" % i for i in range(7)}, "/missing": None,
    }
    assert max(outstanding) == 2  # the third goes out with two unanswered, never a fourth
