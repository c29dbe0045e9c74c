"""Connections to the brokers of one cluster, request dispatch and metadata refresh.

Brokers are named by node id. Until the first metadata response arrives the
only known nodes are the bootstrap servers, under the ids -1, -2, ...;
afterwards the brokers the cluster lists. A node is connected on first use
(``connect``: TCP plus ApiVersions, bounded by ``connect_timeout_ms``); a node
whose connection failed is not tried again before an exponential reconnect
backoff has passed.

``send`` writes a request and returns its :class:`InFlightRequest`; ``poll``
waits for responses on every connection at once, enforces request deadlines
and returns the requests it completed (running their callbacks). ``request``
is the blocking form for callers on one thread. Not thread-safe, apart from
``wakeup``, which interrupts a ``poll`` from another thread.
"""

from __future__ import annotations

import random
import selectors
import socket
import time
from typing import Any, Callable, Iterable, Sequence

from spate.client.config import ClientConfig, parse_bootstrap_servers
from spate.client.errors import BrokerUnavailableError, ClientClosedError, KafkaTimeoutError, NetworkError
from spate.client.net.connection import BrokerConnection, InFlightRequest, SocketFactory
from spate.client.net.descriptions import BrokerDescription
from spate.client.net.metadata import ClusterSnapshot, Metadata, snapshot_from_response
from spate.client.net.retry import Backoff
from spate.client.net.security import ClientSecurity
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.metadata import MetadataRequest

Callback = Callable[[InFlightRequest], None]


class NetworkClient:
    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        config: ClientConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
        allow_auto_topic_creation: bool = False,
    ) -> None:
        self.config = config
        self.clock = clock
        self._rng = rng or random.Random()
        self._socket_factory = socket_factory
        self._security = ClientSecurity.from_config(config)
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self._bootstrap = {
            -(index + 1): BrokerDescription(-(index + 1), host, port)
            for index, (host, port) in enumerate(parse_bootstrap_servers(bootstrap_servers))
        }
        self.backoff = Backoff(config.retry_backoff_ms, config.retry_backoff_max_ms, self._rng)
        self.metadata = Metadata(
            max_age=config.metadata_max_age_ms / 1000,
            refresh_backoff=config.retry_backoff_ms / 1000,
            clock=clock,
        )
        self._connections: dict[int, BrokerConnection] = {}
        # Nodes known by address only, e.g. a coordinator's own connection (see register_node).
        self._extra_nodes: dict[int, BrokerDescription] = {}
        # id(request) -> (request, callback) for requests still in flight.
        self._callbacks: dict[int, tuple[InFlightRequest, Callback]] = {}
        # node id -> (consecutive connect failures, earliest next attempt, last error)
        self._reconnect: dict[int, tuple[int, float, BrokerUnavailableError]] = {}
        self._selector = selectors.DefaultSelector()
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)
        self._selector.register(self._wake_reader, selectors.EVENT_READ, None)
        self._metadata_request: InFlightRequest | None = None
        self._closed = False
        # Lost-wakeup-free signalling without a syscall per call: see wakeup().
        self._polling = False
        self._wake_requested = False

    # --- nodes --------------------------------------------------------------------------------

    @property
    def bootstrap_addresses(self) -> list[str]:
        return [b.address for b in self._bootstrap.values()]

    def node(self, node_id: int) -> BrokerDescription | None:
        return (
            self.metadata.snapshot.brokers.get(node_id)
            or self._extra_nodes.get(node_id)
            or self._bootstrap.get(node_id)
        )

    def register_node(self, node_id: int, host: str, port: int) -> None:
        """Make ``host:port`` reachable as ``node_id`` whatever the metadata says.

        Group and transaction coordinators get a connection of their own under
        an id no broker uses, as in Kafka's clients: a JoinGroup the broker
        holds for seconds must not stall fetches queued behind it. A node whose
        address changed is disconnected first.
        """
        known = self._extra_nodes.get(node_id)
        if known is not None and (known.host, known.port) != (host, port):
            self.disconnect(node_id)
        self._extra_nodes[node_id] = BrokerDescription(node_id, host, port)

    def known_nodes(self) -> list[int]:
        brokers = self.metadata.snapshot.brokers
        return list(brokers) if brokers else list(self._bootstrap)

    def is_connected(self, node_id: int) -> bool:
        conn = self._connections.get(node_id)
        return conn is not None and conn.connected

    def in_flight_count(self, node_id: int) -> int:
        conn = self._connections.get(node_id)
        return conn.in_flight if conn is not None else 0

    def connect_delay(self, node_id: int, now: float) -> float:
        """Seconds before a connection attempt to ``node_id`` is allowed (0 if connected)."""
        if self.is_connected(node_id):
            return 0.0
        failure = self._reconnect.get(node_id)
        return 0.0 if failure is None else max(0.0, failure[1] - now)

    def least_loaded_node(self, now: float) -> int | None:
        """A connected node with the fewest requests in flight, else one that may be connected now."""
        nodes = self.known_nodes()
        self._rng.shuffle(nodes)
        connected = [n for n in nodes if self.is_connected(n)]
        if connected:
            return min(connected, key=self.in_flight_count)
        ready = [n for n in nodes if self.connect_delay(n, now) == 0]
        if ready:
            return ready[0]
        # Every node is backing off; fall back to the bootstrap servers, which a
        # stale broker list may have hidden.
        bootstrap = [n for n in self._bootstrap if self.connect_delay(n, now) == 0]
        return bootstrap[0] if bootstrap else None

    def any_node(self) -> int:
        """:meth:`least_loaded_node`, or a retriable KafkaError (NETWORK_EXCEPTION) when no broker may be tried."""
        node = self.least_loaded_node(self.clock())
        if node is None:
            # Every broker is backing off after a failed connection: say why the last one failed.
            latest = max(self._reconnect.values(), key=lambda failure: failure[1], default=None)
            reason = f" (last connection failure: {latest[2]})" if latest is not None else ""
            raise KafkaError(ErrorCode.NETWORK_EXCEPTION, f"no broker reachable{reason}")
        return node

    def connect(self, node_id: int, deadline: float | None = None) -> BrokerConnection:
        """The connection to ``node_id``, opened now if needed; BrokerUnavailableError otherwise."""
        if self._closed:
            raise ClientClosedError("the client is closed")
        conn = self._connections.get(node_id)
        if conn is not None and conn.connected:
            return conn
        now = self.clock()
        failure = self._reconnect.get(node_id)
        if failure is not None and failure[1] > now:
            raise failure[2]
        description = self.node(node_id)
        if description is None:
            self.metadata.request_update()
            raise BrokerUnavailableError(f"broker {node_id} is not in the cluster metadata")
        limit = now + self.config.connect_timeout_ms / 1000
        conn = BrokerConnection(
            node_id,
            description.host,
            description.port,
            self.config.client_id,
            max_response_size=self.config.max_response_size,
            clock=self.clock,
            socket_factory=self._socket_factory,
            security=self._security,
        )
        try:
            conn.connect(limit if deadline is None else max(min(limit, deadline), now + 0.001))
        except BrokerUnavailableError as exc:
            count = failure[0] + 1 if failure is not None else 1
            self._reconnect[node_id] = (count, self.clock() + self.backoff.delay(count - 1), exc)
            self.metadata.request_update()
            raise
        self._reconnect.pop(node_id, None)
        self._connections[node_id] = conn
        self._selector.register(conn.fileno(), selectors.EVENT_READ, conn)
        return conn

    def last_connect_error(self, node_id: int) -> BrokerUnavailableError | None:
        failure = self._reconnect.get(node_id)
        return None if failure is None else failure[2]

    # --- requests -----------------------------------------------------------------------------

    def send(
        self,
        node_id: int,
        api_key: ApiKey,
        body: Any,
        *,
        version: int | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
        timeout: float | None = None,
        context: Any = None,
        callback: Callback | None = None,
    ) -> InFlightRequest:
        """Write a request to ``node_id``; the version is negotiated unless given.

        ``timeout`` (seconds) defaults to ``request_timeout_ms``. Raises
        BrokerUnavailableError, NetworkError or UnsupportedApiError; the
        callback then never runs.
        """
        conn = self.connect(node_id)
        if version is None:
            version = conn.version(api_key, min_version=min_version, max_version=max_version)
        wait = self.config.request_timeout_ms / 1000 if timeout is None else timeout
        try:
            request = conn.send(api_key, version, body, self.clock() + wait, context)
        except (NetworkError, KafkaTimeoutError):
            self._forget_if_broken(conn)
            raise
        if callback is not None:
            if request.done:
                callback(request)
            else:
                self._callbacks[id(request)] = (request, callback)
        return request

    def poll(self, timeout: float) -> list[InFlightRequest]:
        """Wait up to ``timeout`` seconds for responses; return the requests completed meanwhile."""
        if self._closed:
            raise ClientClosedError("the client is closed")
        now = self.clock()
        wait = max(0.0, timeout)
        for conn in self._connections.values():
            deadline = conn.earliest_deadline()
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - now))
        completed: list[InFlightRequest] = []
        self._polling = True
        if self._wake_requested:
            wait = 0.0
        try:
            events = self._selector.select(wait)
        finally:
            self._polling = False
            self._wake_requested = False
        for key, _ in events:
            conn = key.data
            if conn is None:
                self._drain_wakeups()
                continue
            completed.extend(conn.read())
        now = self.clock()
        for conn in list(self._connections.values()):
            completed.extend(conn.expire(now))
            self._forget_if_broken(conn)
        self._run_callbacks()
        return completed

    def wakeup(self) -> None:
        """Make a concurrent or the next ``poll`` return at once (safe from any thread).

        The flag is set before ``_polling`` is read, and ``poll`` sets
        ``_polling`` before it reads the flag, so either the poller sees the
        flag or this call sees the poller and writes to the wakeup socket;
        the syscall is only paid when someone is actually waiting.
        """
        self._wake_requested = True
        if not self._polling:
            return
        try:
            self._wake_writer.send(b"\x00")
        except (BlockingIOError, OSError):
            pass  # already pending, or closing

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_reader.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def request(
        self,
        node_id: int,
        api_key: ApiKey,
        body: Any,
        *,
        deadline: float | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
    ) -> tuple[int, Any]:
        """Send and wait: ``(version, response body)``; raises what the request failed with."""
        now = self.clock()
        timeout = self.config.request_timeout_ms / 1000
        if deadline is not None:
            timeout = min(timeout, max(deadline - now, 0.001))
        request = self.send(node_id, api_key, body, min_version=min_version, max_version=max_version, timeout=timeout)
        while not request.done:
            self.poll(max(0.0, request.deadline - self.clock()))
        return request.api_version, request.result()

    # --- metadata -----------------------------------------------------------------------------

    def maybe_update_metadata(self, now: float) -> float:
        """Send a metadata refresh if one is due; seconds until the next check."""
        if self._metadata_request is not None:
            return self.config.request_timeout_ms / 1000
        delay = self.metadata.time_to_update(now)
        if delay > 0:
            return delay
        node = self.least_loaded_node(now)
        if node is None:
            return self.backoff.delay(0)
        self.metadata.attempted(now)
        body = self._metadata_body(sorted(self.metadata.topics), self.allow_auto_topic_creation)
        try:
            self._metadata_request = self.send(node, ApiKey.METADATA, body, callback=self._metadata_done)
        except Exception:  # the node is unreachable or too old; the next check tries another
            self.metadata.failed(self.clock())
            return self.metadata.refresh_backoff
        return self.config.request_timeout_ms / 1000

    def _metadata_done(self, request: InFlightRequest) -> None:
        self._metadata_request = None
        if request.error is not None:
            self.metadata.failed(self.clock())
        else:
            self.metadata.update(snapshot_from_response(request.response), self.clock())

    def fetch_metadata(
        self,
        topics: Iterable[str] | None,
        *,
        deadline: float,
        allow_auto_topic_creation: bool = False,
        node: int | None = None,
    ) -> ClusterSnapshot:
        """One blocking Metadata request (None: every topic) to ``node`` or the least loaded node.

        The cached snapshot is replaced only when the request asked for every
        topic the cache tracks, so that a narrow admin query does not hide
        topics a producer or consumer depends on.
        """
        if node is None:
            node = self.least_loaded_node(self.clock())
        if node is None:
            errors = [str(self.last_connect_error(n)) for n in self.known_nodes() if self.last_connect_error(n)]
            raise BrokerUnavailableError("no broker can be reached: " + "; ".join(errors or ["all are backing off"]))
        names = None if topics is None else sorted(set(topics))
        _, body = self.request(
            node, ApiKey.METADATA, self._metadata_body(names, allow_auto_topic_creation), deadline=deadline, min_version=1
        )
        snapshot = snapshot_from_response(body)
        if names is None or set(names) >= self.metadata.topics:
            self.metadata.update(snapshot, self.clock())
        return snapshot

    @staticmethod
    def _metadata_body(topics: list[str] | None, allow_auto_topic_creation: bool) -> Any:
        return MetadataRequest(
            topics=None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=allow_auto_topic_creation,
        )

    # --- teardown -----------------------------------------------------------------------------

    def disconnect(self, node_id: int) -> list[InFlightRequest]:
        """Close one connection; its requests fail (their callbacks run)."""
        conn = self._connections.get(node_id)
        if conn is None:
            return []
        failed = conn.close()
        self._forget_if_broken(conn)
        return failed

    def disconnect_all(self) -> None:
        for node_id in list(self._connections):
            self.disconnect(node_id)

    def _run_callbacks(self) -> None:
        done = [key for key, (request, _) in self._callbacks.items() if request.done]
        for key in done:
            # A callback may close connections, which runs callbacks itself.
            entry = self._callbacks.pop(key, None)
            if entry is not None:
                entry[1](entry[0])

    def _forget_if_broken(self, conn: BrokerConnection) -> None:
        """Drop a connection that broke; the requests it failed get their callbacks."""
        if conn.connected:
            return
        for key in list(self._selector.get_map().values()):
            if key.data is conn:
                self._selector.unregister(key.fd)
        if self._connections.get(conn.node_id) is conn:
            del self._connections[conn.node_id]
        self.metadata.request_update()
        self._run_callbacks()

    def close(self) -> None:
        if self._closed:
            return
        self.disconnect_all()
        self._closed = True
        self._selector.close()
        self._wake_reader.close()
        self._wake_writer.close()
