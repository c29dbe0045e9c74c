"""Where requests wait on partitions (Kafka's fetch and produce purgatories).

A long-poll fetch waits for an append to one of its partitions; an acks=all
produce waits for the high watermark to pass what it appended
(:mod:`broker_core.server.delayed_produce`). Both watch their partitions
here, and whatever changes a partition calls :meth:`FetchPurgatory.notify_append`:
an append, the high watermark moving, an ISR change, a change of leadership
(Kafka's ``tryCompleteDelayedRequests``).

A watcher is a callable that returns True once its operation is done
(Kafka's ``tryComplete``). A notification calls every watcher of the
partition on the spot and drops those that are done: a fetch's watcher wakes
the fetch, which reads again; a delayed produce's watcher checks its
partitions and completes when all are settled. No timer wheel is needed:
each waiter bounds its own wait. Everything runs on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from typing import Callable, Iterable

logger = logging.getLogger(__name__)

PartitionKey = tuple[str, int]
Watcher = Callable[[], bool]


class FetchPurgatory:
    def __init__(self) -> None:
        self._watchers: defaultdict[PartitionKey, set[Watcher]] = defaultdict(set)

    async def wait_for_append(self, keys: Iterable[PartitionKey], timeout_s: float) -> bool:
        """Wait until one of ``keys`` changes; False when the time ran out."""
        if timeout_s <= 0:
            return False
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> bool:
            if not future.done():
                future.set_result(None)
            return True

        unwatch = self.watch(keys, wake)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            unwatch()

    def watch(self, keys: Iterable[PartitionKey], watcher: Watcher) -> Callable[[], None]:
        """Call ``watcher`` on every change of ``keys`` until it returns True; returns what stops it earlier."""
        keys = list(keys)
        for key in keys:
            self._watchers[key].add(watcher)

        def unwatch() -> None:
            for key in keys:
                watchers = self._watchers.get(key)
                if watchers is not None:
                    watchers.discard(watcher)
                    if not watchers:
                        del self._watchers[key]

        return unwatch

    def notify_append(self, key: PartitionKey) -> None:
        """The partition changed (an append, its high watermark, ISR or leadership): run its watchers."""
        watchers = self._watchers.get(key)
        if not watchers:
            return
        for watcher in list(watchers):
            try:
                done = watcher()
            except Exception:
                logger.exception("a request waiting on %s-%d failed", *key)
                done = True
            if done:
                watchers.discard(watcher)
        if not self._watchers.get(key, True):
            del self._watchers[key]

    @property
    def waiting(self) -> int:
        """Watchers registered, counted once per partition they watch."""
        return sum(len(w) for w in self._watchers.values())
