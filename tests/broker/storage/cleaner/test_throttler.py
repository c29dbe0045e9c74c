"""The cleaner's I/O stays under log.cleaner.io.max.bytes.per.second (throttler.py)."""

from __future__ import annotations

from broker_core.storage.cleaner.throttler import Throttler


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_a_thread_over_the_rate_sleeps_until_the_rate_is_met():
    clock = Clock()
    throttler = Throttler(1_000_000, check_interval_ms=100, clock=clock, sleep=clock.sleep)
    clock.now = 0.1
    assert throttler.maybe_throttle(500_000) == 0.4  # 500 kB in 0.1 s at 1 MB/s takes 0.5 s
    assert clock.slept == [0.4]


def test_a_thread_under_the_rate_never_sleeps():
    clock = Clock()
    throttler = Throttler(1_000_000, check_interval_ms=100, clock=clock, sleep=clock.sleep)
    for _ in range(10):
        clock.now += 0.1
        throttler.maybe_throttle(50_000)
    assert clock.slept == []
