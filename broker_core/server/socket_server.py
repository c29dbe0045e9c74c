"""The broker's listening sockets: one server per listener (Kafka's SocketServer and its acceptors).

Every entry of ``listeners`` is bound (port 0 takes a free port); a
connection knows the listener it arrived on, so its requests are answered
with that listener's view of the cluster. What a broker registers is its
advertised endpoints: ``advertised.listeners`` (else ``listeners``), with a
wildcard host replaced by this machine's name and port 0 by the port the
listener bound. Every security protocol is served: an SSL or SASL_SSL
listener completes the TLS handshake (bounded by
:data:`TLS_HANDSHAKE_TIMEOUT_S`) before the connection is handed over, and
each listener's :class:`ListenerSecurity` (built, and so checked, when the
server is made) says what its connections must do to authenticate.

Binding happens before the broker registers (an ephemeral port must be known
to be advertised); listening (with ``socket.listen.backlog.size``) and serving
start only when the broker is ready.

Each listening socket has an acceptor task, as Kafka's Acceptor: it waits for
a connection slot (``max.connections``, ``listener.name.<l>.max.connections``)
before it accepts, so past those limits new connections wait in the listen
backlog; then it counts the connection against its listener and its address
(``max.connections.per.ip``) and closes one over the limit at once. A
connection's slot is given back when its handler returns.
:meth:`SocketServer.stop_accepting` closes the listening sockets; a connection
accepted before that but not yet handed over is closed then too.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from broker_core.cluster.endpoint import EndPoint
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.listeners import Listener
from broker_core.security.listener_security import AuthenticationCounters, ListenerSecurity, listener_security
from broker_core.server.connection_quotas import ConnectionLimits, ConnectionQuotas, TooManyConnectionsError
from broker_core.server.sasl_gate import SaslGate

logger = logging.getLogger(__name__)

LIMIT_LOG_INTERVAL_S = 60.0

ConnectionHandler = Callable[[str, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
TLS_HANDSHAKE_TIMEOUT_S = 10.0
# Matches asyncio.open_connection's default.
STREAM_LIMIT = 2**16


@dataclass(frozen=True)
class BoundListener:
    """A listener bound to its socket: the port it got, and the endpoint it is known by."""

    listener: Listener
    port: int
    # What clients of this listener are told this broker is: its advertised endpoint, else the bound address.
    endpoint: EndPoint
    advertised: bool


class SocketServer:
    def __init__(self, config: BrokerConfig, on_connection: ConnectionHandler,
                 quotas: ConnectionQuotas | None = None, *, clock: Callable[[], int] | None = None) -> None:
        self._config = config
        self._listeners = config.listeners
        self.authentications = AuthenticationCounters.for_listeners(listener.name for listener in self._listeners)
        now_ms = clock or (lambda: time.time_ns() // 1_000_000)
        self.security: dict[str, ListenerSecurity] = {
            listener.name: listener_security(config, listener, now_ms, self.authentications)
            for listener in self._listeners
        }
        self._on_connection = on_connection
        self.quotas = quotas if quotas is not None else ConnectionQuotas(ConnectionLimits.from_config(config))
        self.backlog = config.get_int("socket.listen.backlog.size")
        # Kafka's socket buffer sizes; -1 leaves the kernel's default (and its autotuning).
        self.send_buffer_bytes = config.get_int("socket.send.buffer.bytes")
        self.receive_buffer_bytes = config.get_int("socket.receive.buffer.bytes")
        self._sockets: dict[str, list[socket.socket]] = {}
        self._acceptors: list[asyncio.Task[None]] = []
        # Every accepted connection until its handler returns, including one not yet handed over.
        self.connection_tasks: set[asyncio.Task[None]] = set()
        self.accepting = False
        self.bound: dict[str, BoundListener] = {}

    async def bind(self) -> None:
        """Bind every listener without listening yet; on failure, what was bound is closed again."""
        ports: dict[str, int] = {}
        try:
            for listener in self._listeners:
                sockets = self._sockets[listener.name] = await _bind(listener)
                ports[listener.name] = sockets[0].getsockname()[1]
        except BaseException:
            self.close()
            raise
        advertised = {listener.name: listener for listener in self._config.advertised_listeners}
        for listener in self._listeners:
            shown = advertised.get(listener.name, listener)
            self.bound[listener.name] = BoundListener(
                listener=listener,
                port=ports[listener.name],
                endpoint=_endpoint(shown, ports[listener.name]),
                advertised=listener.name in advertised,
            )

    def advertised_endpoints(self) -> tuple[EndPoint, ...]:
        """What the broker registers: its advertised listeners, in ``advertised.listeners`` order."""
        order = [listener.name for listener in self._config.advertised_listeners]
        return tuple(self.bound[name].endpoint for name in order if name in self.bound)

    @property
    def first_port(self) -> int | None:
        """The port of the first listener (the embedded broker's only one)."""
        return self.bound[self._listeners[0].name].port if self.bound else None

    async def start_serving(self) -> None:
        self.accepting = True
        for name, sockets in self._sockets.items():
            for sock in sockets:
                # Set before listen, so accepted sockets inherit it and their window scale follows it.
                _set_buffer(sock, socket.SO_RCVBUF, self.receive_buffer_bytes)
                sock.listen(self.backlog)
                self._acceptors.append(asyncio.create_task(self._accept(name, sock), name=f"acceptor-{name}"))

    async def _accept(self, listener_name: str, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        quotas = self.quotas
        last_logged = -LIMIT_LOG_INTERVAL_S
        while True:
            blocked_by = quotas.blocking_limit(listener_name)
            if blocked_by is not None:
                # At the limit under steady load this happens on every accept: say it once a minute.
                now = loop.time()
                level = logging.INFO if now - last_logged >= LIMIT_LOG_INTERVAL_S else logging.DEBUG
                last_logged = now if level == logging.INFO else last_logged
                logger.log(level, "listener %s reached %s: new connections wait in the listen backlog",
                           listener_name, blocked_by)
                await quotas.wait_for_slot(listener_name)
            try:
                sock, address = await loop.sock_accept(listening)
            except OSError as exc:  # out of descriptors, or the peer gave up in the backlog: keep accepting
                logger.warning("accepting on listener %s failed: %s", listener_name, exc)
                await asyncio.sleep(0.1)
                continue
            host = address[0] if isinstance(address, tuple) else str(address)
            try:
                counted = quotas.inc(host, listener_name)
            except TooManyConnectionsError as exc:
                logger.info("closing a connection from %s on listener %s: %s", host, listener_name, exc)
                sock.close()
                continue
            task = asyncio.create_task(self._serve(listener_name, sock, counted), name=f"connection-{host}")
            self.connection_tasks.add(task)
            task.add_done_callback(self.connection_tasks.discard)

    async def _serve(self, listener_name: str, sock: socket.socket, counted: str) -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _set_buffer(sock, socket.SO_SNDBUF, self.send_buffer_bytes)
            reader, writer = await _open_stream(sock, self.security[listener_name].ssl_context)
            if not self.accepting:  # accepted just before the listeners closed
                writer.transport.abort()
                return
            await self._on_connection(listener_name, reader, writer)
        except OSError as exc:
            logger.debug("connection on listener %s failed: %s", listener_name, exc)
            sock.close()
        finally:
            self.quotas.dec(counted, listener_name)

    def describe(self) -> str:
        return ", ".join(
            f"{b.listener} on port {b.port}" + (f" (advertised as {b.endpoint.host}:{b.endpoint.port})"
                                                if b.advertised else "")
            for b in self.bound.values()
        )

    def stop_accepting(self) -> None:
        """Close the listening sockets; connections already handed over go on until the broker closes them."""
        self.accepting = False
        for acceptor in self._acceptors:
            acceptor.cancel()
        self._acceptors = []
        for sockets in self._sockets.values():
            for sock in sockets:
                sock.close()

    def close(self) -> None:
        self.stop_accepting()


def _set_buffer(sock: socket.socket, option: int, size: int) -> None:
    if size != -1:
        sock.setsockopt(socket.SOL_SOCKET, option, size)


def connection_security(security: ListenerSecurity, writer: asyncio.StreamWriter) -> dict[str, Any]:
    """What a connection on this listener is given: its SASL gate, its TLS principal, whether sendfile works."""
    peer = writer.get_extra_info("peername")
    authenticator = security.new_authenticator()
    address = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
    gate = None if authenticator is None else SaslGate(authenticator, security.counters, address,
                                                       security.listener_name, security.failed_delay_ms,
                                                       security.max_receive_size)
    return {  # the principal first: a certificate no mapping rule matches raises NoMatchingRuleError
        "principal": security.tls_principal(writer.get_extra_info("ssl_object")),
        "gate": gate,
        "zero_copy": not security.uses_tls,
    }


async def _open_stream(sock: socket.socket, context: ssl.SSLContext | None,
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over an accepted socket; with ``context``, once the TLS handshake completed."""
    if context is None:
        return await asyncio.open_connection(sock=sock)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STREAM_LIMIT, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock, ssl=context,
                                                      ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def _bind(listener: Listener) -> list[socket.socket]:
    """One socket per address the listener's host resolves to (a wildcard host: every family), on one port."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(listener.host or None, listener.port, family=socket.AF_UNSPEC,
                                   type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    port = listener.port
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            # An ephemeral port: the first socket's, so every family of the listener has the same one.
            address = (address[0], port, *address[2:])
            try:
                sock.bind(address)
            except OSError as exc:
                raise OSError(exc.errno, f"error while attempting to bind on address {address!r}: "
                              f"{exc.strerror.lower() if exc.strerror else exc}") from None
            sock.setblocking(False)
            port = sock.getsockname()[1]
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _endpoint(listener: Listener, bound_port: int) -> EndPoint:
    host = listener.host
    if listener.binds_all_interfaces or not host:
        host = socket.getfqdn()
    port = bound_port if listener.port == 0 else listener.port
    return EndPoint(listener.name, host, port, listener.security_protocol)
