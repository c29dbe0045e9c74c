"""Exponential backoff with jitter, and retrying until a deadline."""

from __future__ import annotations

import random

import pytest

from spate.client.errors import KafkaTimeoutError, NetworkError
from spate.client.net.retry import Backoff, retry_until
from spate.protocol import ErrorCode, KafkaError


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_backoff_doubles_from_the_initial_delay_up_to_the_maximum_within_twenty_percent() -> None:
    backoff = Backoff(100, 1000, random.Random(1))
    for attempt, base in enumerate([0.1, 0.2, 0.4, 0.8, 1.0, 1.0]):
        assert base * 0.8 <= backoff.delay(attempt) <= base * 1.2


def test_zero_backoff_never_waits() -> None:
    assert Backoff(0, 0).delay(5) == 0.0


def test_retriable_failures_are_retried_until_success() -> None:
    time = FakeTime()
    calls = []

    def attempt(deadline: float) -> str:
        calls.append(deadline)
        if len(calls) < 3:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return "done"

    refreshed = []
    result = retry_until(10.0, attempt, Backoff(100, 1000, random.Random(2)), what="op", clock=time.clock,
                         sleep=time.sleep, before_retry=refreshed.append)
    assert result == "done"
    assert len(calls) == 3 and len(refreshed) == 2 and len(time.sleeps) == 2


def test_a_non_retriable_failure_propagates_at_once() -> None:
    time = FakeTime()

    def attempt(deadline: float) -> None:
        raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS)

    with pytest.raises(KafkaError) as raised:
        retry_until(10.0, attempt, Backoff(100, 1000), what="op", clock=time.clock, sleep=time.sleep)
    assert raised.value.code == ErrorCode.TOPIC_ALREADY_EXISTS and time.sleeps == []


def test_the_deadline_turns_the_last_failure_into_a_timeout_that_names_it() -> None:
    time = FakeTime()
    cause = NetworkError("cannot connect to broker at 10.0.0.1:9092")

    def attempt(deadline: float) -> None:
        raise cause

    with pytest.raises(KafkaTimeoutError, match="create_topics did not complete.*10.0.0.1:9092") as raised:
        retry_until(1.0, attempt, Backoff(100, 200, random.Random(3)), what="create_topics", clock=time.clock,
                    sleep=time.sleep)
    assert raised.value.__cause__ is cause
    assert time.now == pytest.approx(1.0)
