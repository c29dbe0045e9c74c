"""A single thread that runs submitted work one item at a time, in submission order.

ZooKeeper's client calls watches and state listeners on its own threads,
where blocking (for instance on another ZooKeeper call) would stall every
other notification. Recipes hand the work to an :class:`EventThread`
instead, so their callbacks may block and call ZooKeeper, and two callbacks
of one recipe never run at once (as Kafka's controller event thread).
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

logger = logging.getLogger(__name__)

_STOP = object()


class EventThread:
    """Runs callables submitted from any thread on one daemon thread named ``name``.

    An exception from a callable is logged and the thread carries on.
    :meth:`stop` runs what was submitted before it, then ends the thread.
    """

    def __init__(self, name: str) -> None:
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stopped = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[..., object], *args: object) -> None:
        with self._lock:
            if self._stopped:
                return
            self._queue.put((work, args))

    def stop(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._queue.put(_STOP)
        if not self.is_current():
            self._thread.join(timeout_s)

    def is_current(self) -> bool:
        """True when called from this event thread."""
        return threading.current_thread() is self._thread

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            work, args = item
            try:
                work(*args)
            except Exception:
                logger.exception("%s: event handler failed", self._thread.name)
