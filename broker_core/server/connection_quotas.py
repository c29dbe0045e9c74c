"""Kafka's ConnectionQuotas: how many connections the broker holds, in all and per client address.

``max.connections`` is broker-wide: when it is reached, the acceptors stop
accepting and a new connection waits in the listen backlog until one closes
(:meth:`ConnectionQuotas.wait_for_slot`). The inter-broker listener is exempt
when there are others, so replication and controller traffic always get through (Kafka also closes
the least recently used client connection then; Spate does not).
``max.connections.per.ip`` (with ``max.connections.per.ip.overrides`` per host)
is checked once a connection is accepted: one over the limit is closed at once
(:meth:`ConnectionQuotas.inc` raises :class:`TooManyConnectionsError`).

Not thread-safe: used from the event loop only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections import deque
from dataclasses import dataclass, field
from typing import Mapping

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
        return cls(config.get_int("max.connections"), max_per_ip, overrides, protected)

    def limit_for(self, address: str) -> int:
        return self.per_ip_overrides.get(address, self.max_per_ip)


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
        self._slot_waiters: deque[asyncio.Future[None]] = deque()

    def count(self, address: str) -> int:
        return self._per_address.get(normalise_address(address), 0)

    def has_slot(self, listener_name: str) -> bool:
        return self.total < self.limits.max_connections or listener_name == self.limits.protected_listener

    async def wait_for_slot(self, listener_name: str) -> None:
        """Return once ``listener_name`` may accept one more connection."""
        while not self.has_slot(listener_name):
            waiter = asyncio.get_running_loop().create_future()
            self._slot_waiters.append(waiter)
            await waiter

    def inc(self, address: str) -> str:
        """Count a connection accepted from ``address``; TooManyConnectionsError (nothing counted) over its
        per-address limit. Returns the normalised address, which :meth:`dec` takes."""
        address = normalise_address(address)
        held = self._per_address.get(address, 0)
        limit = self.limits.limit_for(address)
        if held >= limit:
            raise TooManyConnectionsError(address, limit)
        self._per_address[address] = held + 1
        self.total += 1
        return address

    def dec(self, address: str) -> None:
        held = self._per_address.get(address, 0)
        if held <= 1:
            self._per_address.pop(address, None)
        else:
            self._per_address[address] = held - 1
        self.total -= 1
        while self._slot_waiters:
            waiter = self._slot_waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
