"""Kafka's ConnectionQuotas: how many connections the broker holds, in all, per listener and per client address.

``max.connections`` is broker-wide and ``listener.name.<listener>.max.connections``
bounds one listener (KIP-402): when either is reached, that listener's acceptor
stops accepting and a new connection waits in the listen backlog until one
closes (:meth:`ConnectionQuotas.wait_for_slot`). The inter-broker listener is
exempt from the broker-wide limit when there are others, so replication and
controller traffic always get through; a connection it takes past the limit
makes the broker close the least recently used connection of another listener
(:meth:`ConnectionQuotas.excess_connections`), as Kafka's processors do.
``max.connections.per.ip`` (with ``max.connections.per.ip.overrides`` per host)
is checked once a connection is accepted: one over the limit is closed at once
(:meth:`ConnectionQuotas.inc` raises :class:`TooManyConnectionsError`).

Not thread-safe: used from the event loop only.
"""

from __future__ import annotations

import asyncio
import heapq
import ipaddress
import socket
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Protocol, TypeVar

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.connection_overrides import parse_connection_overrides
from broker_core.config.errors import ConfigError


class TooManyConnectionsError(Exception):
    def __init__(self, address: str, limit: int) -> None:
        super().__init__(f"too many connections from {address} (max.connections.per.ip limit {limit})")
        self.address = address
        self.limit = limit


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    max_per_ip: int
    # By normalised address: host names are resolved when the limits are read.
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    # Not subject to max_connections.
    protected_listener: str | None = None
    # listener.name.<listener>.max.connections, by listener name (upper case); a listener not here has no own limit.
    per_listener: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: BrokerConfig) -> ConnectionLimits:
        key = "max.connections.per.ip.overrides"
        text = config.get_str(key)
        overrides = {_resolve(host, key, text): count for host, count in parse_connection_overrides(text).items()}
        max_per_ip = config.get_int("max.connections.per.ip")
        if max_per_ip == 0 and not overrides:
            raise ConfigError("must be set when max.connections.per.ip is 0: otherwise no client can connect",
                              key=key)
        # As in Kafka, the inter-broker listener is only exempt when clients have another one to be limited on.
        protected = config.inter_broker_listener_name if len(config.listeners) > 1 else None
        per_listener = {
            listener.name: limit for listener in config.listeners
            if (limit := config.get_listener_int(listener.name, "max.connections")) is not None
        }
        return cls(config.get_int("max.connections"), max_per_ip, overrides, protected, per_listener)

    def limit_for(self, address: str) -> int:
        return self.per_ip_overrides.get(address, self.max_per_ip)


class LimitedConnection(Protocol):
    listener_name: str
    # Monotonic seconds of the connection's last request.
    last_active: float


C = TypeVar("C", bound=LimitedConnection)


def least_recently_used(connections: Iterable[C], protected_listener: str | None, count: int) -> list[C]:
    """The ``count`` connections used least recently, none of them on ``protected_listener``: those that
    close when the inter-broker listener took the broker past ``max.connections`` (Kafka's lowest priority
    channels)."""
    candidates = (c for c in connections if c.listener_name != protected_listener)
    return heapq.nsmallest(count, candidates, key=lambda c: c.last_active) if count > 0 else []


def normalise_address(address: str) -> str:
    """One spelling per address (``::ffff:127.0.0.1`` is 127.0.0.1), so limits and counts match."""
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(parsed)


def _resolve(host: str, key: str, text: str) -> str:
    try:
        return normalise_address(str(ipaddress.ip_address(host)))
    except ValueError:
        pass
    try:
        return normalise_address(socket.gethostbyname(host))
    except OSError as exc:
        raise ConfigError(f"cannot resolve host {host}: {exc}", key=key, value=text) from None


class ConnectionQuotas:
    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.total = 0
        self._per_address: dict[str, int] = {}
        self._per_listener: dict[str, int] = {}
        self._slot_waiters: deque[asyncio.Future[None]] = deque()

    def count(self, address: str) -> int:
        return self._per_address.get(normalise_address(address), 0)

    def listener_count(self, listener_name: str) -> int:
        return self._per_listener.get(listener_name, 0)

    def has_slot(self, listener_name: str) -> bool:
        return self.blocking_limit(listener_name) is None

    def blocking_limit(self, listener_name: str) -> str | None:
        """Which limit keeps ``listener_name`` from accepting now, as a phrase for the log; None: none does."""
        own = self.limits.per_listener.get(listener_name)
        if own is not None and self.listener_count(listener_name) >= own:
            return f"listener.name.{listener_name.lower()}.max.connections={own}"
        if self.total >= self.limits.max_connections and listener_name != self.limits.protected_listener:
            return f"max.connections={self.limits.max_connections}"
        return None

    def excess_connections(self) -> int:
        """Connections over ``max.connections``, which only the inter-broker listener can take the broker to:
        as many of the other listeners' connections must close."""
        return max(0, self.total - self.limits.max_connections)

    async def wait_for_slot(self, listener_name: str) -> None:
        """Return once ``listener_name`` may accept one more connection."""
        while not self.has_slot(listener_name):
            waiter = asyncio.get_running_loop().create_future()
            self._slot_waiters.append(waiter)
            await waiter

    def inc(self, address: str, listener_name: str | None = None) -> str:
        """Count a connection accepted from ``address`` on ``listener_name``; TooManyConnectionsError (nothing
        counted) over its per-address limit. Returns the normalised address, which :meth:`dec` takes."""
        address = normalise_address(address)
        held = self._per_address.get(address, 0)
        limit = self.limits.limit_for(address)
        if held >= limit:
            raise TooManyConnectionsError(address, limit)
        self._per_address[address] = held + 1
        if listener_name is not None:
            self._per_listener[listener_name] = self._per_listener.get(listener_name, 0) + 1
        self.total += 1
        return address

    def dec(self, address: str, listener_name: str | None = None) -> None:
        _decrement(self._per_address, address)
        if listener_name is not None:
            _decrement(self._per_listener, listener_name)
        self.total -= 1
        # Acceptors of different listeners wait on different limits: each looks again.
        waiters, self._slot_waiters = self._slot_waiters, deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


def _decrement(counts: dict[str, int], key: str) -> None:
    held = counts.get(key, 0)
    if held <= 1:
        counts.pop(key, None)
    else:
        counts[key] = held - 1
