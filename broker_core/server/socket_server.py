"""The broker's listening sockets: one server per listener (Kafka's SocketServer and its acceptors).

Every entry of ``listeners`` is bound (port 0 takes a free port); a
connection knows the listener it arrived on, so its requests are answered
with that listener's view of the cluster. What a broker registers is its
advertised endpoints: ``advertised.listeners`` (else ``listeners``), with a
wildcard host replaced by this machine's name and port 0 by the port the
listener bound. Only PLAINTEXT listeners are served; any other security
protocol is refused when the configuration is read.

Binding happens before the broker registers (an ephemeral port must be known
to be advertised); serving starts only when the broker is ready.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Awaitable, Callable

from broker_core.cluster.endpoint import PLAINTEXT, EndPoint
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.listeners import Listener

ConnectionHandler = Callable[[str, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def plaintext_listeners(config: BrokerConfig) -> tuple[Listener, ...]:
    """``listeners``, refusing security protocols this broker does not serve yet."""
    listeners = config.listeners
    for listener in listeners:
        if listener.security_protocol != PLAINTEXT:
            raise ConfigError(
                f"listener {listener.name} uses security protocol {listener.security_protocol}, which is not "
                "supported; use PLAINTEXT",
                key="listeners",
            )
    return listeners


@dataclass(frozen=True)
class BoundListener:
    """A listener bound to its socket: the port it got, and the endpoint it is known by."""

    listener: Listener
    port: int
    # What clients of this listener are told this broker is: its advertised endpoint, else the bound address.
    endpoint: EndPoint
    advertised: bool


class SocketServer:
    def __init__(self, config: BrokerConfig, on_connection: ConnectionHandler) -> None:
        self._config = config
        self._listeners = plaintext_listeners(config)
        self._on_connection = on_connection
        self._servers: list[asyncio.base_events.Server] = []
        self.bound: dict[str, BoundListener] = {}

    async def bind(self) -> None:
        """Bind every listener without serving yet; on failure, what was bound is closed again."""
        ports: dict[str, int] = {}
        try:
            for listener in self._listeners:
                server = await asyncio.start_server(
                    self._handler(listener.name), listener.host or None, listener.port, reuse_address=True,
                    start_serving=False,
                )
                self._servers.append(server)
                ports[listener.name] = server.sockets[0].getsockname()[1]
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

    def _handler(self, listener_name: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Awaitable[None]:
            return self._on_connection(listener_name, reader, writer)

        return handle

    def advertised_endpoints(self) -> tuple[EndPoint, ...]:
        """What the broker registers: its advertised listeners, in ``advertised.listeners`` order."""
        order = [listener.name for listener in self._config.advertised_listeners]
        return tuple(self.bound[name].endpoint for name in order if name in self.bound)

    @property
    def first_port(self) -> int | None:
        """The port of the first listener (the embedded broker's only one)."""
        return self.bound[self._listeners[0].name].port if self.bound else None

    async def start_serving(self) -> None:
        for server in self._servers:
            await server.start_serving()

    def describe(self) -> str:
        return ", ".join(
            f"{b.listener} on port {b.port}" + (f" (advertised as {b.endpoint.host}:{b.endpoint.port})"
                                                if b.advertised else "")
            for b in self.bound.values()
        )

    def close(self) -> None:
        for server in self._servers:
            server.close()


def _endpoint(listener: Listener, bound_port: int) -> EndPoint:
    host = listener.host
    if listener.binds_all_interfaces or not host:
        host = socket.getfqdn()
    port = bound_port if listener.port == 0 else listener.port
    return EndPoint(listener.name, host, port, listener.security_protocol)
