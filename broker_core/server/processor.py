"""Kafka's Processor: the connections the acceptors hand over, from admission until they close.

The acceptors (``socket_server``) count a connection against ``max.connections``
and ``max.connections.per.ip`` before they hand it over; here it gets its
security (SASL gate, TLS principal) and becomes a :class:`ClientConnection`
that reads requests into the dispatcher. One the inter-broker listener took
past ``max.connections`` makes the least recently used connections of the
other listeners close (:meth:`Processor.close_excess_connections`), and
``connections.max.idle.ms`` closes those that completed no request for that
long (:meth:`Processor.expire_idle_connections`, with ``idle_expiry``).

Not thread-safe: used from the event loop only.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Mapping

from broker_core.security.principal import NoMatchingRuleError
from broker_core.security.quotas.client_quota_manager import ClientQuotaManager
from broker_core.server.connection import ClientConnection
from broker_core.server.connection_quotas import least_recently_used
from broker_core.server.dispatch import RequestDispatcher
from broker_core.server.idle_expiry import IdleExpiryManager, scan_interval_s
from broker_core.server.memory_pool import MemoryPool
from broker_core.server.socket_server import SocketServer, connection_security
from spate.protocol.api_keys import ApiKey
from spate.protocol.versions import VersionRange

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RequestHandling:
    """What every connection is given to read and answer requests, known once the broker has started."""

    dispatcher: RequestDispatcher
    versions: Mapping[ApiKey, VersionRange]
    # socket.request.max.bytes
    max_request_size: int
    quotas: ClientQuotaManager | None


class Processor:
    def __init__(self, socket_server: SocketServer, memory_pool: MemoryPool) -> None:
        self._socket_server = socket_server
        # queued.max.request.bytes: request bytes read and not yet answered, across connections.
        self._memory_pool = memory_pool
        self._connections: dict[asyncio.Task[None], ClientConnection] = {}
        # Closed to make room past max.connections, until their handlers return and their slots are free.
        self._closed_for_limit: set[ClientConnection] = set()
        self._handling: RequestHandling | None = None

    def handle_requests_with(self, handling: RequestHandling) -> None:
        """Set before the listeners serve: no connection is handed over until then."""
        self._handling = handling

    @property
    def open_connections(self) -> list[ClientConnection]:
        return list(self._connections.values())

    async def serve(self, listener_name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection the acceptor of ``listener_name`` handed over, served until it closes."""
        try:
            security = connection_security(self._socket_server.security[listener_name], writer)
        except NoMatchingRuleError as exc:
            logger.info("closing a TLS connection on listener %s: %s", listener_name, exc)
            writer.close()
            return
        handling = self._handling
        connection = ClientConnection(
            reader, writer, handling.dispatcher, listener_name=listener_name, versions=handling.versions,
            max_request_size=handling.max_request_size, memory_pool=self._memory_pool,
            quotas=handling.quotas, **security,
        )
        task = asyncio.current_task()
        self._connections[task] = connection
        self.close_excess_connections(listener_name)
        try:
            await connection.serve()
        except Exception:
            logger.exception("connection %s failed", connection.peer)
        finally:
            self._connections.pop(task, None)
            self._closed_for_limit.discard(connection)

    def close_excess_connections(self, listener_name: str) -> None:
        """The inter-broker listener took the broker past max.connections: close as many least recently used
        connections of the other listeners, as Kafka's processors do."""
        quotas = self._socket_server.quotas
        excess = quotas.excess_connections() - len(self._closed_for_limit)
        if excess <= 0:
            return
        open_ones = (c for c in self._connections.values() if c not in self._closed_for_limit)
        for connection in least_recently_used(open_ones, quotas.limits.protected_listener, excess):
            logger.info(
                "closing %s on listener %s, the least recently used connection: max.connections=%d is reached "
                "and the inter-broker listener %s accepted one more", connection.peer, connection.listener_name,
                quotas.limits.max_connections, listener_name,
            )
            self._closed_for_limit.add(connection)
            connection.abort()

    async def expire_idle_connections(self, max_idle_ms: int) -> None:
        """connections.max.idle.ms: close connections that completed no request for that long."""
        expiry: IdleExpiryManager[ClientConnection] = IdleExpiryManager(max_idle_ms)
        while True:
            await asyncio.sleep(scan_interval_s(max_idle_ms))
            for connection in expiry.expired(self._connections.values()):
                logger.debug("closing %s: no request for %d ms (connections.max.idle.ms)", connection.peer,
                             max_idle_ms)
                connection.abort()

    def stop_reading(self) -> None:
        """Every connection reads no more requests; its writer still answers what was handled."""
        # Connections stop their own reader and writer tasks; cancelling the
        # connection task itself would race the stream machinery's callbacks.
        for connection in list(self._connections.values()):
            connection.stop_reading()

    def abort_all(self) -> None:
        for connection in list(self._connections.values()):
            connection.abort()
