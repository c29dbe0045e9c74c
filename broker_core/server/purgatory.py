"""Where long-poll fetches wait for appends (Kafka's fetch purgatory).

A waiting fetch registers one future under each partition it reads; an
append to any of them completes the future, and the fetch reads again. No
timer wheel is needed: the waiter itself bounds the wait with ``max_wait_ms``.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Iterable

PartitionKey = tuple[str, int]


class FetchPurgatory:
    def __init__(self) -> None:
        self._watchers: defaultdict[PartitionKey, set[asyncio.Future[None]]] = defaultdict(set)

    async def wait_for_append(self, keys: Iterable[PartitionKey], timeout_s: float) -> bool:
        """Wait until one of ``keys`` gets an append; False when the time ran out."""
        if timeout_s <= 0:
            return False
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        keys = list(keys)
        for key in keys:
            self._watchers[key].add(future)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            for key in keys:
                watchers = self._watchers.get(key)
                if watchers is not None:
                    watchers.discard(future)
                    if not watchers:
                        del self._watchers[key]

    def notify_append(self, key: PartitionKey) -> None:
        watchers = self._watchers.pop(key, None)
        if not watchers:
            return
        for future in watchers:
            if not future.done():
                future.set_result(None)

    @property
    def waiting(self) -> int:
        return sum(len(w) for w in self._watchers.values())
