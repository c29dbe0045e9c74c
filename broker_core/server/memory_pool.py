"""Kafka's memory pool for requests (``queued.max.request.bytes``): a cap on request bytes held across connections.

A connection takes a frame's size from the pool as soon as the frame's size
prefix has arrived, before it reads the rest, and gives it back once the
request is answered (or the connection ends). While the pool is exhausted, no
connection starts reading a new frame: it stops reading its socket, so the
bytes wait in the peer's and the kernel's buffers rather than in the broker.

The pool is not strict, as Kafka's socket-server pool is not: an allocation
succeeds whenever some memory is left, even if the frame is larger than what
is left. That way a frame larger than the whole pool (up to
``socket.request.max.bytes``) still gets through, and the bytes held never
exceed the capacity by more than one frame. A capacity of zero or less means
unbounded (Kafka's default, -1).

Not thread-safe: used from the event loop only.
"""

from __future__ import annotations

import asyncio
from collections import deque

# Plenty for an unbounded pool: request bytes held in memory never get near it.
UNBOUNDED = 1 << 62


class MemoryPool:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity if capacity > 0 else UNBOUNDED
        # Read on the hot path as a plain attribute; negative after an allocation larger than what was left.
        self.available = self.capacity
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def bounded(self) -> bool:
        return self.capacity != UNBOUNDED

    @property
    def used(self) -> int:
        return self.capacity - self.available

    @property
    def exhausted(self) -> bool:
        return self.available <= 0

    def allocate(self, size: int) -> None:
        """Take ``size`` bytes now, whatever is left (the caller waited for :meth:`wait_for_memory` first
        where it may wait)."""
        self.available -= size

    def release(self, size: int) -> None:
        self.available += size
        if self._waiters and self.available > 0:
            # Every waiter rechecks: the first one to run may use up what was freed again.
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)

    async def wait_for_memory(self) -> None:
        """Return once some memory is left (at once if some is)."""
        while self.available <= 0:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
