"""Exponential backoff with jitter, and retrying until a deadline."""

from __future__ import annotations

import random

import pytest

from spate.client.errors import AdminError, KafkaTimeoutError, NetworkError
from spate.client.net.retry import Backoff, KeyedCall, Retrier, retry_until
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


def test_a_retrier_retries_with_its_clients_settings_and_hook() -> None:
    time = FakeTime()
    refreshed: list[BaseException] = []
    retrier = Retrier(Backoff(100, 1000, random.Random(4)), time.clock, time.sleep, before_retry=refreshed.append)
    answers = iter([KafkaError(ErrorCode.LEADER_NOT_AVAILABLE), "done"])

    def attempt(deadline: float) -> str:
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert retrier.call("op", attempt, 10.0) == "done"
    assert len(refreshed) == 1 and len(time.sleeps) == 1


def test_a_keyed_call_settles_each_key_and_retries_only_the_ones_left() -> None:
    time = FakeTime()
    retrier = Retrier(Backoff(100, 1000, random.Random(5)), time.clock, time.sleep)
    call: KeyedCall[str] = KeyedCall({"a": 1, "b": 2, "c": 3})
    asked: list[list[str]] = []
    answers = {
        "a": iter([ErrorCode.NONE]),
        "b": iter([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NONE]),
        "c": iter([ErrorCode.GROUP_ID_NOT_FOUND]),
    }

    def attempt(deadline: float) -> None:
        asked.append(sorted(call.pending))
        for key in list(call.pending):
            call.settle(key, next(answers[key]), f"op on {key}", retry_on={ErrorCode.COORDINATOR_LOAD_IN_PROGRESS},
                        result=lambda: key.upper())
        call.settle("a", ErrorCode.GROUP_ID_NOT_FOUND, "a late answer about a settled key is ignored")

    with pytest.raises(AdminError) as raised:
        retrier.call_each("op", call, attempt, 10.0)
    assert asked == [["a", "b", "c"], ["b"]]
    assert call.results == {"a": "A", "b": "B"} and call.pending == {}
    assert set(raised.value.errors) == {"c"} and raised.value.code == ErrorCode.GROUP_ID_NOT_FOUND
    assert str(raised.value.errors["c"]).endswith("op on c")


def test_a_keyed_call_that_keeps_getting_retriable_answers_times_out_naming_the_last() -> None:
    time = FakeTime()
    retrier = Retrier(Backoff(100, 200, random.Random(6)), time.clock, time.sleep)
    call: KeyedCall[str] = KeyedCall({"a": None})

    def attempt(deadline: float) -> None:
        call.retry(KafkaError(ErrorCode.NOT_COORDINATOR, "still moving"))

    with pytest.raises(KafkaTimeoutError, match="op did not complete.*still moving"):
        retrier.call_each("op", call, attempt, 1.0)
    assert "a" in call and not call.retrying


def test_a_keyed_call_refused_as_a_whole_settles_every_key_under_one_error() -> None:
    call: KeyedCall[str] = KeyedCall({"a": None, "b": None})
    call.fail_rest("group", KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    call.end_attempt()  # nothing noted for a retry: no error
    assert call.pending == {} and list(call.errors) == ["group"]
