"""Timers for coordinators: a small interface, and its asyncio implementation.

Coordinator logic never sleeps or reads a global clock. It asks a
:class:`Scheduler` for the time and for callbacks after a delay, so tests
can drive session timeouts and rebalance delays with a manual clock while
the broker uses its event loop. Callbacks run on the loop's thread, one at
a time, like request handlers; an exception a callback raises is logged and
does not stop later timers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, Protocol

logger = logging.getLogger(__name__)


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Scheduler(Protocol):
    def now_ms(self) -> int:
        """Wall-clock milliseconds, for timestamps that are stored or compared with stored ones."""
        ...

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` once after ``delay_ms`` (0: as soon as the current work yields)."""
        ...


class LoopScheduler:
    """A :class:`Scheduler` on an asyncio event loop; timestamps from ``clock``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: Callable[[], int]) -> None:
        self._loop = loop
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    def call_later(self, delay_ms: int, callback: Callable[[], None]) -> TimerHandle:
        return self._loop.call_later(max(delay_ms, 0) / 1000, _logged, callback)


def _logged(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # a failed timer must not take the event loop's other work with it
        logger.exception("coordinator timer %r failed", callback)
