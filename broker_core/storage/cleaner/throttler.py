"""Keeping the cleaner's I/O under ``log.cleaner.io.max.bytes.per.second`` (Kafka's ``Throttler``).

Threads report the bytes they read and write; every ``check_interval_ms``
the observed rate is compared with the desired one, and the reporting thread
sleeps for as long as it takes the rate to come back down. Shared by all
cleaner threads (thread-safe). Clock and sleep are injected.
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
