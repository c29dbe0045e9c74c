"""Executor consumers kept between tasks, one per partition read.

Spark reuses a Python worker process for many tasks
(``spark.python.worker.reuse``, on by default), and a streaming query reads
the same partitions every micro-batch, each range starting where the last
one ended. A consumer kept from the previous task of the same partition
saves the connection and the ApiVersions and Metadata round trips. It
also comes with the records it fetched past the end of the previous range
(``leftover``): when the next range starts there, as it does when one
micro-batch follows another, those records need no fetch at all, and the
consumer's last fetch, sent while the previous task handed its data out,
already asks for the offset after them (the broker answers it as soon as
records arrive).

Consumers are kept per (read settings, partition) in this process, at most
``capacity`` of them; the least recently used one is closed to make room,
and any unused for ``idle_timeout_s`` is closed the next time the cache is
used. Leftover records are only used within ``leftover_ttl_s`` of being
fetched: a consumer kept longer seeks and fetches again. A task that fails
closes its consumer instead of handing it back. Thread-safe: a consumer is
lent to one task at a time.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Hashable

from spate.client import Consumer, RawBatch, TopicPartition

DEFAULT_CAPACITY = 32
DEFAULT_IDLE_TIMEOUT_S = 60.0
DEFAULT_LEFTOVER_TTL_S = 10.0

CacheKey = tuple[Hashable, TopicPartition]


@dataclass
class KeptConsumer:
    """A consumer of one partition between tasks.

    ``next_offset`` is where the last range it read ended; ``leftover`` holds
    the fetched batches with records from there on (the consumer's position
    is after them).
    """

    consumer: Consumer
    next_offset: int
    leftover: list[RawBatch] = field(default_factory=list)


class ConsumerCache:
    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
        leftover_ttl_s: float = DEFAULT_LEFTOVER_TTL_S,
    ) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must not be negative, not {capacity}")
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s
        self.leftover_ttl_s = leftover_ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        # key -> (kept consumer, when it was handed back); oldest first.
        self._idle: OrderedDict[CacheKey, tuple[KeptConsumer, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._idle)

    def acquire(self, settings_key: Hashable, tp: TopicPartition) -> KeptConsumer | None:
        """The consumer kept for ``tp`` under these settings, taken out of the cache (None: none kept)."""
        with self._lock:
            stale = self._expire()
            kept = self._idle.pop((settings_key, tp), None)
        _close_all(stale)
        if kept is None or kept[0].consumer.closed:
            return None
        if self._clock() - kept[1] > self.leftover_ttl_s:
            # Records fetched long ago may be of a topic deleted and created again since: fetch afresh.
            kept[0].leftover = []
            kept[0].next_offset = -1
        return kept[0]

    def release(self, settings_key: Hashable, tp: TopicPartition, kept: KeptConsumer) -> None:
        """Keep ``kept`` for the next task reading ``tp`` (closing what no longer fits)."""
        if kept.consumer.closed:
            return
        with self._lock:
            evicted = self._expire()
            replaced = self._idle.pop((settings_key, tp), None)
            if replaced is not None:
                evicted.append(replaced[0])
            self._idle[(settings_key, tp)] = (kept, self._clock())
            while len(self._idle) > self.capacity:
                evicted.append(self._idle.popitem(last=False)[1][0])
        _close_all(evicted)

    def close(self) -> None:
        with self._lock:
            consumers = [kept for kept, _ in self._idle.values()]
            self._idle.clear()
        _close_all(consumers)

    def _expire(self) -> list[KeptConsumer]:
        """Take out consumers idle for too long (the lock is held)."""
        limit = self._clock() - self.idle_timeout_s
        stale = []
        while self._idle:
            key, (kept, since) = next(iter(self._idle.items()))
            if since > limit:
                break
            del self._idle[key]
            stale.append(kept)
        return stale


def _close_all(kept: list[KeptConsumer]) -> None:
    for item in kept:
        try:
            item.consumer.close(timeout_ms=0)
        except Exception:  # noqa: BLE001 - closing is best effort; the consumer is dropped anyway
            pass


# The cache of this Python worker process.
WORKER_CACHE = ConsumerCache()
atexit.register(WORKER_CACHE.close)
