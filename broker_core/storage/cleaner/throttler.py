"""Keeping the cleaner from taking what requests need.

``Throttler`` keeps the cleaner's I/O under
``log.cleaner.io.max.bytes.per.second`` (Kafka's ``Throttler``): threads
report the bytes they read and write; every ``check_interval_ms`` the
observed rate is compared with the desired one, and the reporting thread
sleeps for as long as it takes the rate to come back down. Shared by all
cleaner threads (thread-safe).

``InterpreterShare`` is what a Python broker needs besides: the cleaner's
threads run Python code under the same interpreter lock as the request
thread. After each batch a cleaner thread looks at how much CPU time the
process's other threads spent since its last look (the process's CPU time
less its own; other processes taking the core do not count). When they
spent a fair share of what it spent itself, the request thread was busy
(the interpreter hands the lock to a waiting thread every switch interval),
and the cleaner sleeps long enough to use at most ``busy_share`` of the
interpreter's time while it stays busy.
With the broker idle the cleaner runs at full speed, without giving up the
core to other processes on each batch.

Clocks and sleep are injected.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

DEFAULT_CHECK_INTERVAL_MS = 300


class Throttler:
    def __init__(
        self,
        bytes_per_second: float,
        *,
        check_interval_ms: int = DEFAULT_CHECK_INTERVAL_MS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if bytes_per_second <= 0:
            raise ValueError(f"log.cleaner.io.max.bytes.per.second must be positive, not {bytes_per_second}")
        self._rate = bytes_per_second
        self._interval = check_interval_ms / 1000
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._period_start = clock()
        self._observed = 0.0

    def maybe_throttle(self, observed_bytes: int) -> float:
        """Count ``observed_bytes``; sleep when over the rate. Return the seconds slept."""
        with self._lock:
            self._observed += observed_bytes
            now = self._clock()
            elapsed = now - self._period_start
            if elapsed < self._interval:
                return 0.0
            pause = self._observed / self._rate - elapsed
            self._observed = 0.0
            self._period_start = now + max(pause, 0.0)
        if pause > 0:
            self._sleep(pause)
            return pause
        return 0.0


# While a cleaner thread worked, the process's other threads spent at least this much CPU time, and at least this
# share of the cleaner's own: the request thread had work (a busy one takes the interpreter about half the time;
# the broker's background threads, idle, take far less).
_CONTENDED_S = 0.0005
_CONTENDED_SHARE = 0.25


class InterpreterShare:
    """One cleaner thread's pacing against a busy request thread (not shared)."""

    def __init__(
        self,
        busy_share: float = 0.1,
        *,
        cpu_clock: Callable[[], float] = time.process_time,
        thread_clock: Callable[[], float] = time.thread_time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 0 < busy_share <= 1:
            raise ValueError(f"busy_share must be in (0, 1], not {busy_share}")
        self._backoff = (1 - busy_share) / busy_share
        self._cpu_clock = cpu_clock
        self._thread_clock = thread_clock
        self._sleep = sleep
        self._own_cpu, self._others_cpu = self._cpu_times()

    def _cpu_times(self) -> tuple[float, float]:
        """CPU time spent by this thread, and by the process's other threads."""
        own = self._thread_clock()
        return own, self._cpu_clock() - own

    def pause(self) -> float:
        """Sleep when the process's other threads were busy since the last pause; return the seconds slept.

        The sleep lasts ``1 / busy_share - 1`` times the CPU time the thread
        spent since: its share of the interpreter, whatever the machine's load
        does to wall time."""
        own, others = self._cpu_times()
        worked, others_ran = own - self._own_cpu, others - self._others_cpu
        slept = 0.0
        if others_ran > _CONTENDED_S and others_ran > worked * _CONTENDED_SHARE:
            slept = worked * self._backoff
            self._sleep(slept)
        # What the other threads do while this one sleeps counts at the next pause: a request thread kept
        # from the interpreter while this one works spends nothing then, but it does while this one sleeps.
        self._own_cpu, self._others_cpu = own, others
        return slept
