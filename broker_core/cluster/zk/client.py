"""A ZooKeeper session for the broker: kazoo underneath, Kafka's settings and guarantees on top.

:class:`ZkSession` is the one place the broker talks to ZooKeeper. It

* connects to ``zookeeper.connect``, creating the chroot first if it is
  absent (as Kafka does), and gives up after ``zookeeper.connection.timeout.ms``;
* asks for ``zookeeper.session.timeout.ms`` (the server may clamp it to its
  own bounds, 2 to 20 ticks);
* bounds every wait: an operation that gets no answer within the session
  timeout fails, and :meth:`ZkSession.retry` retries lost connections at most
  :attr:`RetryPolicy.max_attempts` times within :attr:`RetryPolicy.deadline_ms`,
  then raises :class:`ZooKeeperUnavailableError`;
* logs in with SASL DIGEST-MD5 when a :class:`ZkSaslLogin` is configured,
  failing fast with :class:`ZooKeeperAuthenticationError` when ZooKeeper
  rejects it, and gives every znode it creates the ACL of
  :mod:`~broker_core.cluster.zk.znode_acls` (``zookeeper.set.acl``);
* reports the session's life as :class:`SessionEvent`\\ s: ``CONNECTED``
  (``new_session`` when the session is not the one before: ephemeral znodes
  and watches are gone), ``SUSPENDED`` (connection lost, the session may
  live on) and ``LOST`` (session expired or closed). Listeners run one at a
  time on the session's own event thread and may call ZooKeeper.

Reconnection after a lost connection never gives up while the session is
open: kazoo tries the servers again and again, with a delay growing to one
second, and starts a new session once the old one has expired.

A write whose answer was lost may still have been applied. Writers that must
know use :meth:`ZkSession.retry_write`: on a retry their attempt is told so,
and first checks whether the lost try landed.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from kazoo.client import KazooClient, KazooState, TransactionRequest
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    NodeExistsError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import ZnodeStat
from kazoo.retry import KazooRetry, RetryFailedError

from broker_core.cluster.zk.errors import ZooKeeperAuthenticationError, ZooKeeperUnavailableError
from broker_core.cluster.zk.event_thread import EventThread
from broker_core.cluster.zk.zk_sasl import SERVER_SASL_SETTINGS, SET_ACL_PROPERTY, ZkSaslLogin, zk_sasl_login
from broker_core.cluster.zk.znode_acls import AclTransaction, ZnodeAcls
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.zookeeper import ZkConnectString, parse_zookeeper_connect

logger = logging.getLogger(__name__)

DEFAULT_SESSION_TIMEOUT_MS = 18_000
_T = TypeVar("_T")
# Reconnection: retry forever (the session decides when it is over), at most a second apart.
_RECONNECT_MAX_DELAY_S = 1.0


class SessionState(enum.Enum):
    CONNECTED = "connected"
    SUSPENDED = "suspended"  # no connection; the session (ephemerals, watches) may survive
    LOST = "lost"  # expired or closed: its ephemeral znodes are gone


@dataclass(frozen=True)
class SessionEvent:
    state: SessionState
    session_id: int | None = None
    # CONNECTED on a session other than the previous one: re-create ephemerals, re-read, re-watch.
    new_session: bool = False


SessionListener = Callable[[SessionEvent], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How operations retry lost connections: bounded in attempts and in time."""

    max_attempts: int = 10
    initial_backoff_ms: int = 100
    max_backoff_ms: int = 1000
    deadline_ms: int = DEFAULT_SESSION_TIMEOUT_MS

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.initial_backoff_ms < 0 or self.deadline_ms < 1:
            raise ValueError(f"invalid retry policy {self}")

    def kazoo_retry(self) -> KazooRetry:
        return KazooRetry(
            max_tries=self.max_attempts,
            delay=self.initial_backoff_ms / 1000,
            backoff=2,
            max_jitter=0.2,
            max_delay=self.max_backoff_ms / 1000,
            deadline=self.deadline_ms / 1000,
            ignore_expire=True,
        )


@dataclass(frozen=True)
class ZkClientConfig:
    """Where ZooKeeper is and how long to wait for it (Kafka's ``zookeeper.*`` settings)."""

    connect: ZkConnectString
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    connection_timeout_ms: int | None = None  # None: the session timeout, as in Kafka
    retry: RetryPolicy | None = field(default=None)  # None: 10 attempts within the session timeout
    sasl: ZkSaslLogin | None = None  # None: no SASL login
    set_acl: bool = False  # zookeeper.set.acl: creator-only ACLs on every znode created (needs ``sasl``)
    max_in_flight_requests: int = 10  # zookeeper.max.in.flight.requests: a batched read's pipelined requests

    def __post_init__(self) -> None:
        if self.set_acl and self.sasl is None:
            raise ConfigError("is true, but no SASL login to ZooKeeper is configured", key=SET_ACL_PROPERTY)

    @classmethod
    def of(cls, connect: str, **settings: Any) -> ZkClientConfig:
        """From a ``host:port[,...][/chroot]`` string; a bad one raises :class:`ConfigError`."""
        try:
            parsed = parse_zookeeper_connect(connect)
        except ValueError as exc:
            raise ConfigError(str(exc), key="zookeeper.connect", value=connect) from None
        return cls(parsed, **settings)

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ZkClientConfig:
        connect = config.zookeeper_connect_string
        if connect is None:
            raise ConfigError("is empty; set it to host:port[,host:port...][/chroot]", key="zookeeper.connect")
        return cls(
            connect,
            session_timeout_ms=config.zookeeper_session_timeout_ms,
            connection_timeout_ms=config.zookeeper_connection_timeout_ms,
            sasl=zk_sasl_login(config),
            set_acl=config.get_bool(SET_ACL_PROPERTY),
            max_in_flight_requests=config.get_int("zookeeper.max.in.flight.requests"),
        )

    @property
    def effective_connection_timeout_ms(self) -> int:
        return self.connection_timeout_ms if self.connection_timeout_ms is not None else self.session_timeout_ms

    @property
    def retry_policy(self) -> RetryPolicy:
        return self.retry if self.retry is not None else RetryPolicy(deadline_ms=self.session_timeout_ms)


class ZkSession:
    """One ZooKeeper session (see the module docstring). Thread-safe."""

    def __init__(self, config: ZkClientConfig) -> None:
        self.config = config
        self._operation_timeout_s = config.session_timeout_ms / 1000
        self._retry = config.retry_policy.kazoo_retry()
        self._acls = ZnodeAcls(secure=config.set_acl)
        self._client = self._new_client(config.connect.hosts + (config.connect.chroot or ""))
        self._listeners: list[SessionListener] = []
        self._lock = threading.Lock()
        self._events = EventThread("zk-session-events")
        self._last_session_id: int | None = None
        self._closed = False
        self._client.add_listener(self._on_kazoo_state)

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> ZkSession:
        """Connect (creating the chroot if needed); :class:`ZooKeeperUnavailableError` after the timeout."""
        if self.config.connect.chroot:
            self._create_chroot(self.config.connect.chroot)
        self._start_client(self._client)
        if self.config.sasl is not None:
            logger.info("%s: logged in as %s", self.describe, self.config.sasl.describe)
        return self

    def close(self) -> None:
        """End the session: its ephemeral znodes go, listeners hear ``LOST``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._client.stop()
            self._client.close()
        finally:
            self._events.stop()

    def __enter__(self) -> ZkSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._client.connected

    @property
    def session_id(self) -> int | None:
        client_id = self._client.client_id
        return client_id[0] if client_id else None

    @property
    def client_id(self) -> tuple[int, bytes] | None:
        """The session id and password, or ``None`` before the first connection."""
        return self._client.client_id

    @property
    def describe(self) -> str:
        return f"zookeeper://{self.config.connect}"

    # --- listeners --------------------------------------------------------------------

    def add_listener(self, listener: SessionListener) -> Callable[[], None]:
        """Hear every later session state change; returns a function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    # --- operations: every wait bounded by the session timeout --------------------------

    def get(self, path: str, watch: Callable[..., object] | None = None) -> tuple[bytes, ZnodeStat]:
        return self.retry(lambda: self._wait(self._client.get_async(path, watch=watch)))

    def get_children(self, path: str, watch: Callable[..., object] | None = None) -> list[str]:
        return self.retry(lambda: self._wait(self._client.get_children_async(path, watch=watch)))

    def exists(self, path: str, watch: Callable[..., object] | None = None) -> ZnodeStat | None:
        return self.retry(lambda: self._wait(self._client.exists_async(path, watch=watch)))

    def get_many(self, paths: Sequence[str]) -> dict[str, tuple[bytes, ZnodeStat] | None]:
        """Read several znodes in one round of pipelined requests; ``None`` for those that do not exist."""

        def read_all() -> dict[str, tuple[bytes, ZnodeStat] | None]:
            window = max(1, self.config.max_in_flight_requests)
            pending: deque[tuple[str, Any]] = deque()
            found: dict[str, tuple[bytes, ZnodeStat] | None] = {}

            def take_oldest() -> None:
                path, result = pending.popleft()
                try:
                    found[path] = self._wait(result)
                except NoNodeError:
                    found[path] = None

            for path in paths:
                if len(pending) >= window:  # zookeeper.max.in.flight.requests: the oldest answer first
                    take_oldest()
                pending.append((path, self._client.get_async(path)))
            while pending:
                take_oldest()
            return found

        return self.retry(read_all)

    def create(self, path: str, value: bytes = b"", *, ephemeral: bool = False, sequence: bool = False) -> str:
        """One attempt (callers retry through :meth:`retry_write`)."""
        acl = self._acls.for_path(path)
        return self._wait(self._client.create_async(path, value, acl=acl, ephemeral=ephemeral, sequence=sequence))

    def set(self, path: str, value: bytes, *, version: int) -> ZnodeStat:
        """Conditional on ``version``; one attempt."""
        return self._wait(self._client.set_async(path, value, version=version))

    def delete(self, path: str, *, version: int = -1) -> None:
        self._wait(self._client.delete_async(path, version=version))

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its parents, empty, unless they exist (idempotent, retried)."""
        self.retry(lambda: self._ensure_path(self._client, path))

    def transaction(self) -> TransactionRequest | AclTransaction:
        return self._acls.transaction(self._client.transaction())

    def commit(self, transaction: TransactionRequest | AclTransaction) -> list[Any]:
        """One attempt; the result holds an exception instance for each operation that failed."""
        return self._wait(transaction.commit_async())

    def retry(self, operation: Callable[[], _T]) -> _T:
        """Run ``operation``, retrying lost connections within the policy's bounds."""
        try:
            return self._retry.copy()(operation)
        except RetryFailedError as exc:
            raise ZooKeeperUnavailableError(f"{self.describe}: no answer ({exc})") from None
        except ConnectionClosedError:
            raise ZooKeeperUnavailableError(f"{self.describe}: the session is closed") from None

    def retry_write(self, attempt: Callable[[bool], _T]) -> _T:
        """Like :meth:`retry`; ``attempt(retrying)`` learns when an earlier try may have been applied."""
        lost = False

        def once() -> _T:
            nonlocal lost
            try:
                return attempt(lost)
            except (OperationTimeoutError, SessionExpiredError, ConnectionLoss):
                lost = True
                raise

        return self.retry(once)

    # --- internals --------------------------------------------------------------------

    def _wait(self, result: Any) -> Any:
        try:
            return result.get(timeout=self._operation_timeout_s)
        except KazooTimeoutError:
            raise OperationTimeoutError(f"no answer within {self._operation_timeout_s:g}s") from None

    def _ensure_path(self, client: KazooClient, path: str) -> None:
        if not self._acls.secure:
            self._wait(client.ensure_path_async(path))
            return
        # Each missing znode on the way gets the ACL of its own path (kazoo's would give all the same one).
        if self._wait(client.exists_async(path)) is not None:
            return
        prefix = ""
        for name in path.strip("/").split("/"):
            prefix += "/" + name
            try:
                self._wait(client.create_async(prefix, b"", acl=self._acls.for_path(prefix)))
            except NodeExistsError:
                pass

    def _new_client(self, hosts: str) -> KazooClient:
        sasl = self.config.sasl
        return KazooClient(
            hosts=hosts,
            timeout=self.config.session_timeout_ms / 1000,
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=_RECONNECT_MAX_DELAY_S),
            command_retry=self.config.retry_policy.kazoo_retry(),
            sasl_options=sasl.kazoo_sasl_options() if sasl is not None else None,
        )

    def _start_client(self, client: KazooClient) -> None:
        timeout_ms = self.config.effective_connection_timeout_ms
        try:
            client.start(timeout=timeout_ms / 1000)
        except KazooTimeoutError:
            raise ZooKeeperUnavailableError(
                f"cannot connect to ZooKeeper at {self.config.connect.hosts} within {timeout_ms} ms"
            ) from None
        if self.config.sasl is not None:
            self._check_login(client)

    def _check_login(self, client: KazooClient) -> None:
        """Wait for the SASL exchange, which kazoo runs after reporting the connection, to end.

        A request queued now is sent after the exchange; a rejected login fails it with
        :class:`AuthFailedError` and kazoo stops the client. kazoo gives up on a silent
        exchange after the session timeout: wait a little longer, so that is what is seen.
        """
        sasl = self.config.sasl
        try:
            client.exists_async("/").get(timeout=2 * self._operation_timeout_s)
            return
        except AuthFailedError:
            problem = f"rejected the {sasl.describe}: check the username and password there, and"
        except (KazooTimeoutError, ConnectionLoss, SessionExpiredError):
            problem = f"did not complete the {sasl.describe}: check"
        client.stop()
        client.close()
        raise ZooKeeperAuthenticationError(
            f"ZooKeeper at {self.config.connect.hosts} {problem} that the server enables SASL ({SERVER_SASL_SETTINGS})"
        )

    def _create_chroot(self, chroot: str) -> None:
        bootstrap = self._new_client(self.config.connect.hosts)
        self._start_client(bootstrap)
        try:
            self.retry(lambda: self._ensure_path(bootstrap, chroot))
        finally:
            bootstrap.stop()
            bootstrap.close()

    def _on_kazoo_state(self, state: str) -> None:
        # Called on kazoo's connection thread, which must not block: hand over to the event thread.
        if state == KazooState.CONNECTED:
            session_id = self.session_id
            event = SessionEvent(SessionState.CONNECTED, session_id, new_session=session_id != self._last_session_id)
            self._last_session_id = session_id
        elif state == KazooState.SUSPENDED:
            event = SessionEvent(SessionState.SUSPENDED, self._last_session_id)
        else:
            event = SessionEvent(SessionState.LOST, self._last_session_id)
        self._events.submit(self._dispatch, event)

    def _dispatch(self, event: SessionEvent) -> None:
        logger.info("%s: session %s %s", self.describe, _hex(event.session_id), event.state.value)
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("%s: session listener failed on %s", self.describe, event)


def _hex(session_id: int | None) -> str:
    return f"0x{session_id:x}" if session_id is not None else "(none)"
