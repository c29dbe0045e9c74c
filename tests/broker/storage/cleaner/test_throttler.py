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
    """Clocks where, while a cleaner thread works, the process's other threads spend ``others`` seconds of
    CPU and other processes ``elsewhere`` seconds."""

    def __init__(self, others: float, elsewhere: float = 0.0) -> None:
        self.now = 0.0
        self.own_cpu = 0.0
        self.others_cpu = 0.0
        self.others = others
        self.elsewhere = elsewhere
        self.others_while_sleeping = 0.0  # the share of a sleep the other threads spend running

    def __call__(self) -> float:
        return self.now

    def cpu_time(self) -> float:
        return self.own_cpu + self.others_cpu

    def thread_time(self) -> float:
        return self.own_cpu

    def work(self, seconds: float) -> None:
        self.now += seconds + self.others + self.elsewhere
        self.own_cpu += seconds
        self.others_cpu += self.others

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.others_cpu += self.others_while_sleeping * seconds


def share_of(interpreter: Interpreter) -> InterpreterShare:
    return InterpreterShare(0.2, cpu_clock=interpreter.cpu_time, thread_clock=interpreter.thread_time,
                            sleep=interpreter.sleep)


def test_a_cleaner_thread_takes_at_most_its_share_while_the_request_thread_is_busy():
    interpreter = Interpreter(others=0.004)
    share = share_of(interpreter)
    interpreter.work(0.001)  # a batch's work, while the request thread took the interpreter for 4 ms
    assert share.pause() == pytest.approx(0.004)  # 1 ms of CPU at 20% of the interpreter: 4 ms of sleep


def test_a_cleaner_thread_runs_at_full_speed_while_the_broker_is_idle_even_on_a_busy_machine():
    interpreter = Interpreter(others=0.0, elsewhere=0.005)
    share = share_of(interpreter)
    for _ in range(10):
        interpreter.work(0.001)
        assert share.pause() == 0.0
    assert interpreter.now == pytest.approx(0.06)  # never slept, not even to yield


def test_the_broker_background_threads_do_not_slow_a_cleaner_thread_down():
    # Timers and flushes: a little CPU now and then, however long a batch takes on a loaded machine.
    interpreter = Interpreter(others=0.0006, elsewhere=0.05)
    share = share_of(interpreter)
    for _ in range(10):
        interpreter.work(0.01)
        assert share.pause() == 0.0


def test_a_request_thread_kept_waiting_while_the_cleaner_works_still_counts_as_busy():
    # The request thread runs only while the cleaner sleeps (it waits for the interpreter otherwise).
    interpreter = Interpreter(others=0.004)
    interpreter.others_while_sleeping = 1.0
    share = share_of(interpreter)
    interpreter.work(0.001)
    assert share.pause() > 0
    interpreter.others = 0.0
    for _ in range(5):
        interpreter.work(0.001)
        assert share.pause() == pytest.approx(0.004)


def test_a_cleaner_thread_speeds_up_again_once_the_request_thread_is_idle():
    interpreter = Interpreter(others=0.004)
    share = share_of(interpreter)
    interpreter.work(0.001)
    assert share.pause() > 0
    interpreter.others = 0.0
    interpreter.work(0.001)
    assert share.pause() == 0.0
