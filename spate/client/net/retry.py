"""Exponential backoff with jitter, and retrying an operation until a deadline.

Kafka clients (KIP-580) back off exponentially from ``retry.backoff.ms`` to
``retry.backoff.max.ms`` with 20% random jitter, so that many clients retrying
after the same failure do not hit a broker in lockstep.

Every blocking call of the clients is one ``attempt(deadline)`` retried by
:func:`retry_until`; a client keeps its way of retrying (backoff, clock,
what to do between attempts) in a :class:`Retrier`. A call about several
keys (topics, partitions, groups, config resources) keeps what is left to do
and what became of each key in a :class:`KeyedCall`: an attempt settles the
keys it can, and a retriable answer for the others ends the attempt so that
only they are tried again.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Container, Generic, Hashable, Mapping, TypeVar

from spate.client.errors import AdminError, KafkaTimeoutError, is_retriable
from spate.protocol import ErrorCode, KafkaError

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

JITTER = 0.2


@dataclass
class Backoff:
    """Delays in seconds for attempt 0, 1, 2, ... : ``initial * 2**attempt``, capped, ±20%."""

    initial_ms: float
    max_ms: float
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int) -> float:
        if self.initial_ms <= 0:
            return 0.0
        base = min(self.max_ms, self.initial_ms * (2 ** min(attempt, 32)))
        return base * self.rng.uniform(1 - JITTER, 1 + JITTER) / 1000


def retry_until(
    deadline: float,
    attempt: Callable[[float], T],
    backoff: Backoff,
    *,
    what: str,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    before_retry: Callable[[BaseException], None] | None = None,
) -> T:
    """Call ``attempt(deadline)`` until it returns, backing off after retriable failures.

    A non-retriable exception propagates at once. When the deadline passes,
    :class:`KafkaTimeoutError` is raised naming ``what`` and the last failure
    (also chained as its cause). ``before_retry`` runs after each retriable
    failure, e.g. to ask for fresh metadata.
    """
    failures = 0
    last: BaseException | None = None
    while True:
        if clock() >= deadline and failures:
            raise _timed_out(what, last)
        try:
            return attempt(deadline)
        except Exception as exc:
            if not is_retriable(exc):
                raise
            last = exc
        if before_retry is not None:
            before_retry(last)
        pause = min(backoff.delay(failures), deadline - clock())
        failures += 1
        if pause > 0:
            sleep(pause)
        if clock() >= deadline:
            raise _timed_out(what, last)


def _timed_out(what: str, last: BaseException | None) -> KafkaTimeoutError:
    detail = f": last error: {last}" if last is not None else ""
    error = KafkaTimeoutError(f"{what} did not complete before its timeout{detail}")
    error.__cause__ = last
    return error


@dataclass
class Retrier:
    """How one client retries: its backoff and clock, and what it does after a retriable failure."""

    backoff: Backoff
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    before_retry: Callable[[BaseException], None] | None = None

    def call(self, what: str, attempt: Callable[[float], T], deadline: float) -> T:
        """:func:`retry_until` with this client's settings."""
        return retry_until(
            deadline, attempt, self.backoff, what=what, clock=self.clock, sleep=self.sleep,
            before_retry=self.before_retry,
        )

    def call_each(self, what: str, call: KeyedCall[K], attempt: Callable[[float], None], deadline: float) -> KeyedCall[K]:
        """Run ``attempt`` until every key of ``call`` is settled; AdminError if some failed for good.

        ``attempt`` settles keys on ``call``; a retriable answer it noted
        (``call.retry``) is raised after it returns, so the keys still
        pending are tried again after the backoff.
        """

        def attempt_and_check(deadline: float) -> None:
            attempt(deadline)
            call.end_attempt()

        self.call(what, attempt_and_check, deadline)
        if call.errors:
            raise AdminError(what, call.errors)
        return call


class KeyedCall(Generic[K]):
    """A call about several keys, settled key by key across attempts.

    ``pending`` maps each key not settled yet to what the call needs for it
    (the key itself, an offset, ...). A key succeeds (its result goes to
    ``results``) or fails for good (its error goes to ``errors``); either
    way it leaves ``pending``. Answers about keys no longer pending are
    ignored.
    """

    def __init__(self, pending: Mapping[K, Any]) -> None:
        self.pending: dict[K, Any] = dict(pending)
        self.results: dict[K, Any] = {}
        self.errors: dict[Any, KafkaError] = {}
        self._retry: BaseException | None = None

    def __contains__(self, key: object) -> bool:
        return key in self.pending

    def succeed(self, key: K, result: Any = None) -> None:
        if self.pending.pop(key, _ABSENT) is not _ABSENT:
            self.results[key] = result

    def fail(self, key: K, error: KafkaError) -> None:
        if self.pending.pop(key, _ABSENT) is not _ABSENT:
            self.errors[key] = error

    def fail_rest(self, key: Any, error: KafkaError) -> None:
        """Refused as a whole: record ``error`` under ``key`` and settle everything still pending."""
        self.errors[key] = error
        self.pending.clear()

    def retry(self, error: BaseException) -> None:
        """A retriable answer: the attempt ends with ``error`` once it has settled what it could."""
        self._retry = error

    @property
    def retrying(self) -> bool:
        return self._retry is not None

    def settle(
        self,
        key: K,
        code: ErrorCode,
        what: str,
        *,
        retry_on: Container[ErrorCode] = frozenset(),
        result: Callable[[], Any] | None = None,
    ) -> None:
        """One key's answer: NONE succeeds (with ``result()``), a code in ``retry_on`` is retried, any other fails.

        ``what`` is the message of the KafkaError for a retry or a failure.
        """
        if key not in self.pending:
            return
        if code == ErrorCode.NONE:
            self.succeed(key, result() if result is not None else None)
        elif code in retry_on:
            self.retry(KafkaError(code, what))
        else:
            self.fail(key, KafkaError(code, what))

    def end_attempt(self) -> None:
        """Raise the retriable answer an attempt noted, if any."""
        error, self._retry = self._retry, None
        if error is not None:
            raise error


_ABSENT = object()
