"""When each step of a request happened, carried by the future its response travels in.

The dispatcher makes a :class:`TimedResponse` instead of a plain future when
metrics are on and stamps it as the request moves (``perf_counter`` seconds);
the connection stamps the write and hands it to :func:`record_request`. With
metrics off nothing here is used.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from broker_core.metrics.request_metrics import RequestMetrics
from spate.protocol.api_keys import ApiKey

clock = time.perf_counter


class TimedResponse(asyncio.Future):  # type: ignore[type-arg]
    """A response future that remembers when its request was read, taken, handled and answered."""

    __slots__ = ("read_at", "taken_at", "returned_at", "answered_at")

    def __init__(self, *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        now = clock()
        self.read_at = self.taken_at = self.returned_at = self.answered_at = now

    def mark_taken(self) -> None:
        self.taken_at = clock()

    def mark_returned(self, *, answered: bool) -> None:
        """The handler returned: with the answer (``answered``), or with work that answers later."""
        self.returned_at = now = clock()
        if answered:
            self.answered_at = now

    def mark_answered(self) -> None:
        self.answered_at = clock()


def record_request(metrics: RequestMetrics, request: Any, response: Any, body: Any, writing_at: float) -> None:
    """A request's response was written (or, for acks=0, skipped) now; ``writing_at`` is when the writer took it."""
    if type(response) is not TimedResponse:
        return
    api_key = request.api_key
    follower = api_key is ApiKey.FETCH and request.body.replica_id >= 0
    metrics.record(
        api_key, follower,
        (response.read_at, response.taken_at, response.returned_at, response.answered_at, writing_at, clock()),
        getattr(body, "throttle_time_ms", 0) or 0,
    )
