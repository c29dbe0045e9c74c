"""The cleaner's I/O stays under log.cleaner.io.max.bytes.per.second (throttler.py)."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.throttler import InterpreterShare, Throttler


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


class Interpreter:
    """Clocks where letting go of the interpreter lets the process's other threads run ``others`` seconds,
    and other processes ``elsewhere`` seconds."""

    def __init__(self, others: float, elsewhere: float = 0.0) -> None:
        self.now = 0.0
        self.cpu = 0.0
        self.others = others
        self.elsewhere = elsewhere

    def __call__(self) -> float:
        return self.now

    def cpu_time(self) -> float:
        return self.cpu

    def sleep(self, seconds: float) -> None:
        if seconds == 0:
            self.now += self.others + self.elsewhere
            self.cpu += self.others
        else:
            self.now += seconds


def test_a_cleaner_thread_takes_at_most_its_share_while_the_request_thread_is_busy():
    interpreter = Interpreter(others=0.005)
    share = InterpreterShare(0.2, clock=interpreter, cpu_clock=interpreter.cpu_time, sleep=interpreter.sleep)
    interpreter.now += 0.001  # a batch's work
    assert share.pause() == pytest.approx(0.004)


def test_a_cleaner_thread_runs_at_full_speed_while_the_broker_is_idle_even_on_a_busy_machine():
    interpreter = Interpreter(others=0.0, elsewhere=0.005)
    share = InterpreterShare(0.2, clock=interpreter, cpu_clock=interpreter.cpu_time, sleep=interpreter.sleep)
    for _ in range(10):
        interpreter.now += 0.001
        assert share.pause() == 0.0
