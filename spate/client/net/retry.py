"""Exponential backoff with jitter, and retrying an operation until a deadline.

Kafka clients (KIP-580) back off exponentially from ``retry.backoff.ms`` to
``retry.backoff.max.ms`` with 20% random jitter, so that many clients retrying
after the same failure do not hit a broker in lockstep.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from spate.client.errors import KafkaTimeoutError, is_retriable

T = TypeVar("T")

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
