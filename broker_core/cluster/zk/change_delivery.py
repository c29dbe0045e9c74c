"""Handing committed :class:`MetadataChange`\\ s to listeners: in commit order, one thread at a time.

The same delivery rule as the embedded store: a writer queues its change while
it holds the store's lock (so the queue is in commit order) and delivers after
releasing it; a thread that finds another one already delivering leaves its
changes to that thread. Listeners therefore run without the lock held and may
call back into the store, and an exception from one is logged, not raised to
the writer.
"""

from __future__ import annotations

import collections
import logging
import threading

from broker_core.cluster.metadata_store import ChangeListener, MetadataChange

logger = logging.getLogger(__name__)


class ChangeDelivery:
    """Listeners and the queue of changes not yet handed to them. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._delivering = threading.Lock()
        self._listeners: list[ChangeListener] = []
        self._pending: collections.deque[MetadataChange] = collections.deque()

    def add(self, listener: ChangeListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove(self, listener: ChangeListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def queue(self, change: MetadataChange) -> None:
        """Queue a committed change; call while holding the lock that orders commits."""
        with self._lock:
            self._pending.append(change)

    def deliver(self) -> None:
        """Hand queued changes to the listeners; call without holding the store's lock.

        The re-check after releasing ``_delivering`` closes the gap where a
        change is queued just as the delivering thread finishes.
        """
        while True:
            if not self._delivering.acquire(blocking=False):
                return
            try:
                while True:
                    with self._lock:
                        if not self._pending:
                            break
                        change = self._pending.popleft()
                        listeners = list(self._listeners)
                    for listener in listeners:
                        try:
                            listener(change)
                        except Exception:
                            logger.exception("metadata change listener failed on %s", change)
            finally:
                self._delivering.release()
            with self._lock:
                if not self._pending:
                    return
