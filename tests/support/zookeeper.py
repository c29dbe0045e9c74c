"""A real ZooKeeper server for tests: one per test module, a fresh chroot per test.

The server is the one ``spate zookeeper start`` runs (ZooKeeper 3.9 from the
pyspark jars) on a free port, with its data and log under the module's
temporary directory. Tests share it but never each other's znodes: each takes
a new chroot. Every wait is bounded.

With ``sasl_users`` the server also accepts SASL DIGEST-MD5 logins from those
users (unauthenticated clients may still connect); :func:`write_client_jaas`
writes the JAAS file a broker logs in with.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

from kazoo.client import KazooClient

from broker_core.cluster.zk.client import ZkClientConfig, ZkSession
from broker_core.cluster.zk.server import ZooKeeperServer
from broker_core.cluster.zk.server_files import ZooKeeperServerConfig
from tests.support.ports import free_port

# A small server that starts fast: tests need neither a big heap nor the optimising compiler.
TEST_JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dzookeeper.jmx.log4j.disable=true")
# Short enough that an expired session is seen quickly, long enough to ride out a server restart.
TEST_SESSION_TIMEOUT_MS = 10_000
WAIT_TIMEOUT_S = 15.0




def wait_until(predicate: Callable[[], Any], what: str, timeout_s: float = WAIT_TIMEOUT_S) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s:g}s waiting for {what}")
        time.sleep(0.02)


class ZooKeeperForTests:
    """One ZooKeeper server and the sessions tests opened on it (closed by :meth:`close`)."""

    def __init__(self, base_dir: Path, sasl_users: dict[str, str] | None = None) -> None:
        self.base_dir = base_dir
        self.server = ZooKeeperServer(
            ZooKeeperServerConfig(base_dir / "data", port=free_port(), sasl_users=dict(sasl_users or {})),
            log_path=base_dir / "zookeeper.log",
            jvm_options=TEST_JVM_OPTIONS,
        )
        self._chroots = itertools.count(1)
        self._sessions: list[ZkSession] = []

    @property
    def connect_string(self) -> str:
        return self.server.connect_string

    def start(self) -> ZooKeeperForTests:
        self.server.start()
        return self

    def new_chroot(self) -> str:
        """A chroot no other test uses."""
        return f"/test-{next(self._chroots)}-{uuid.uuid4().hex[:8]}"

    def client_config(self, chroot: str | None = None, **settings: Any) -> ZkClientConfig:
        settings.setdefault("session_timeout_ms", TEST_SESSION_TIMEOUT_MS)
        return ZkClientConfig.of(self.connect_string + (chroot or ""), **settings)

    def session(self, chroot: str | None = None, **settings: Any) -> ZkSession:
        """A started session, closed with the harness unless the test closes it first."""
        session = ZkSession(self.client_config(chroot, **settings)).start()
        self._sessions.append(session)
        return session

    def close(self) -> None:
        for session in self._sessions:
            session.close()
        self._sessions.clear()
        self.server.stop()


@contextlib.contextmanager
def running_zookeeper(base_dir: Path, sasl_users: dict[str, str] | None = None) -> Iterator[ZooKeeperForTests]:
    harness = ZooKeeperForTests(base_dir, sasl_users).start()
    try:
        yield harness
    finally:
        harness.close()


def expire_session(zookeeper: ZooKeeperForTests, session: ZkSession) -> None:
    """Make ZooKeeper expire ``session``, as if it had been silent past its timeout.

    A second client joins the session with its id and password and closes it;
    the server ends the session, deletes its ephemeral znodes and tells the
    first client ``expired`` when it next talks to it.
    """
    client_id = session.client_id
    if client_id is None:
        raise AssertionError("the session has not connected yet")
    intruder = KazooClient(hosts=zookeeper.connect_string, client_id=client_id, timeout=TEST_SESSION_TIMEOUT_MS / 1000)
    intruder.start(timeout=WAIT_TIMEOUT_S)
    intruder.stop()
    intruder.close()


def write_client_jaas(path: Path, username: str, password: str, section: str = "Client") -> Path:
    """A JAAS file whose ``section`` logs in to ZooKeeper as ``username`` (Kafka's usual client file)."""
    path.write_text(
        f"{section} {{\n"
        f"    org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'    username="{username}"\n'
        f'    password="{password}";\n'
        f"}};\n",
        encoding="utf-8",
    )
    return path
