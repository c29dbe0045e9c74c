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
spent some, the request thread was busy (the interpreter hands the lock to
a waiting thread every switch interval), and the cleaner sleeps long enough
to use at most ``busy_share`` of the interpreter's time while it stays busy.
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


# Other threads of the process spending this much CPU while a cleaner thread worked means they had work.
_CONTENDED_S = 0.0005


class InterpreterShare:
    """One cleaner thread's pacing against a busy request thread (not shared)."""

    def __init__(
        self,
        busy_share: float = 0.2,
        *,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = time.process_time,
        thread_clock: Callable[[], float] = time.thread_time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 0 < busy_share <= 1:
            raise ValueError(f"busy_share must be in (0, 1], not {busy_share}")
        self._backoff = (1 - busy_share) / busy_share
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._thread_clock = thread_clock
        self._sleep = sleep
        self._resumed = clock()
        self._others_cpu = self._others()

    def _others(self) -> float:
        """CPU time the process's other threads have spent."""
        return self._cpu_clock() - self._thread_clock()

    def pause(self) -> float:
        """Sleep when the process's other threads ran since the last pause; return the seconds slept."""
        worked = self._clock() - self._resumed
        others = self._others()
        slept = 0.0
        if others - self._others_cpu > _CONTENDED_S:
            slept = worked * self._backoff
            self._sleep(slept)
            others = self._others()
        self._others_cpu = others
        self._resumed = self._clock()
        return slept
