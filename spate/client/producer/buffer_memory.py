"""``buffer_memory``: the bytes incomplete batches hold, and waiting for room.

Each batch reserves ``max(batch_size, its size)`` when it is created and
returns it when its outcome is known (sent, failed or expired). ``send``
waits while the reservations reach the limit, up to ``max_block_ms``; the
batches still holding memory are also what ``flush`` waits for.

Everything here runs under the producer's lock (the methods say when they
take it themselves); :attr:`BufferMemory.changed` is a condition on that
lock, notified whenever a batch completes or the producer fails.
"""

from __future__ import annotations

import threading
from typing import Callable

from spate.client.errors import KafkaTimeoutError
from spate.client.producer.batch import ProducerBatch


class BufferMemory:
    __slots__ = ("limit", "used", "_batches", "_lock", "changed", "_clock")

    def __init__(self, limit: int, lock: threading.Lock, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.used = 0
        self._batches: dict[ProducerBatch, int] = {}
        self._lock = lock
        self.changed = threading.Condition(lock)
        self._clock = clock

    def reserve(self, batch: ProducerBatch, size: int) -> None:
        """A new batch holds ``size`` bytes until it completes (lock held)."""
        self._batches[batch] = size
        self.used += size

    def incomplete(self) -> list[ProducerBatch]:
        """The batches whose outcome is not known yet (lock held)."""
        return list(self._batches)

    def release(self, batch: ProducerBatch) -> None:
        """``batch`` completed: its memory is free again (takes the lock)."""
        with self._lock:
            self.used -= self._batches.pop(batch, 0)
            self.changed.notify_all()

    def wake_waiters(self) -> None:
        """Let waiters look again, e.g. because the producer failed (takes the lock)."""
        with self._lock:
            self.changed.notify_all()

    def wait_for_room(self, deadline: float, max_block: float, check_usable: Callable[[], None]) -> None:
        """Wait (lock held, released meanwhile) until the reservations are below the limit.

        ``check_usable`` raises if the producer failed meanwhile;
        KafkaTimeoutError when ``deadline`` passes first.
        """
        while self.used >= self.limit:
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise KafkaTimeoutError(f"buffer_memory ({self.limit} bytes) stayed full for {max_block * 1000:.0f} ms")
            self.changed.wait(remaining)
            check_usable()

    def wait_until_done(self, batches: list[ProducerBatch], timeout: float | None) -> bool:
        """Wait (takes the lock) until every batch of ``batches`` is done; False if ``timeout`` passed first."""
        with self.changed:
            return self.changed.wait_for(lambda: all(batch.done for batch in batches), timeout)
