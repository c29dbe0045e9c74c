"""Kafka's idle expiry (``connections.max.idle.ms``): connections that complete no request for that long go.

A connection counts as active while it completes requests, while one of its
requests waits for an answer, and while it waits for request memory (the
broker, not the client, is holding it up then). Bytes that never make up a
whole request do not count: a client that trickles a frame a byte at a time,
or sends a size prefix and nothing more, is closed like one that sends
nothing. Nothing here runs on the request path: the broker scans its
connections every :func:`scan_interval_s`, and a connection only keeps a
counter of the requests it has read.
"""

from __future__ import annotations

import time
from typing import Callable, Generic, Iterable, Protocol, TypeVar


class IdleTracked(Protocol):
    @property
    def requests_read(self) -> int: ...

    @property
    def busy(self) -> bool: ...


C = TypeVar("C", bound=IdleTracked)


def scan_interval_s(max_idle_ms: int) -> float:
    """Often enough that a connection goes within about a tenth of the limit after it, at most once a second."""
    return min(1.0, max(0.01, max_idle_ms / 10_000))


class IdleExpiryManager(Generic[C]):
    def __init__(self, max_idle_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        """``clock`` in seconds, monotonic."""
        self.max_idle_s = max_idle_ms / 1000
        self._clock = clock
        # Per connection: its request count at the last scan, and since when that count has not moved.
        self._seen: dict[C, tuple[int, float]] = {}

    def expired(self, connections: Iterable[C]) -> list[C]:
        """The connections idle for ``connections.max.idle.ms`` or more, as of now; forgets connections that are
        not in ``connections`` any more."""
        now = self._clock()
        seen: dict[C, tuple[int, float]] = {}
        expired: list[C] = []
        for connection in connections:
            count = connection.requests_read
            last = self._seen.get(connection)
            if last is None or last[0] != count or connection.busy:
                seen[connection] = (count, now)
                continue
            seen[connection] = last
            if now - last[1] >= self.max_idle_s:
                expired.append(connection)
        self._seen = seen
        return expired
