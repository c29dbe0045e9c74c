"""The request queue and the handler tasks that drain it.

Connections put decoded requests on one bounded queue (``queued.max.requests``),
each with the name of the listener it arrived on; ``num.io.threads`` handler
tasks take them off and run the API's handler for that listener (each
listener's handlers are bound to what its clients see). A
full queue makes connection readers wait, which stops them reading their
sockets: that is the broker's backpressure. Handlers run on the event loop, so
storage keeps a single writer per partition without locks. A handler that
must wait (a long-poll fetch) returns an awaitable, which completes on its own
task so the handler task is free at once.

Stopping (:meth:`RequestDispatcher.stop`) takes nothing new: requests still
queued are dropped (their futures cancelled, so the connection writers that
wait on them stop), and parked ones get a bounded grace to complete before
they are dropped too. A request submitted after that is dropped at once.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Awaitable, Callable, Mapping

from broker_core.metrics.request_metrics import RequestMetrics
from broker_core.metrics.request_timing import TimedResponse
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request

logger = logging.getLogger(__name__)

Handler = Callable[[Request], Any]


class RequestDispatcher:
    def __init__(self, handlers: Mapping[str, Mapping[ApiKey, Handler]], *, queue_size: int, workers: int,
                 metrics: RequestMetrics | None = None) -> None:
        """``handlers``: by listener name, each API's handler; ``metrics``: where request times go (None: off)."""
        self._handlers = handlers
        self.metrics = metrics
        self._queue: asyncio.Queue[tuple[Request, str, asyncio.Future[Any]] | None] = asyncio.Queue(queue_size)
        self._workers = workers
        self._tasks: list[asyncio.Task[None]] = []
        self._deferred: set[asyncio.Future[Any]] = set()
        self._closed = False

    @property
    def queue_size(self) -> int:
        """Requests waiting for a handler task."""
        return self._queue.qsize()

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._work(), name=f"request-handler-{i}") for i in range(self._workers)]

    async def stop(self, grace_s: float = 0.0) -> None:
        """Take no more requests, drop the queued ones, give parked ones up to ``grace_s`` to complete, then drop
        them; returns once every handler task has ended."""
        self._closed = True
        for task in self._tasks:
            task.cancel()
        self._drop_queued()
        if self._deferred and grace_s > 0:
            await asyncio.wait(set(self._deferred), timeout=grace_s)
        for deferred in list(self._deferred):
            deferred.cancel()
        await asyncio.gather(*self._tasks, *self._deferred, return_exceptions=True)
        self._drop_queued()

    def _drop_queued(self) -> None:
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None:
                item[2].cancel()

    async def submit(self, request: Request, listener_name: str) -> asyncio.Future[Any]:
        """Queue ``request``, which arrived on ``listener_name``; waits while the queue is full. The future
        gets the response body; it is cancelled if the dispatcher stops first."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future() if self.metrics is None else TimedResponse(loop=loop)
        if self._closed:
            future.cancel()
            return future
        await self._queue.put((request, listener_name, future))
        if self._closed:  # queued while stopping, after the queue was emptied: nothing will take it
            future.cancel()
        return future

    async def _work(self) -> None:
        while True:
            request, listener_name, future = await self._queue.get()
            if future.cancelled():
                continue
            timed = type(future) is TimedResponse
            if timed:
                future.mark_taken()
            handler = self._handlers.get(listener_name, {}).get(request.api_key)
            try:
                if handler is None:
                    raise RuntimeError(f"no handler for {request.api_key!r} on listener {listener_name}")
                result = handler(request)
            except Exception as exc:  # the connection decides what a failed handler means
                future.set_exception(exc)
                continue
            if inspect.isawaitable(result):
                if timed:
                    future.mark_returned(answered=False)
                self._defer(result, future)
            else:
                if timed:
                    future.mark_returned(answered=True)
                future.set_result(result)

    def _defer(self, awaitable: Awaitable[Any], future: asyncio.Future[Any]) -> None:
        task = asyncio.ensure_future(awaitable)
        self._deferred.add(task)

        def done(t: asyncio.Future[Any]) -> None:
            self._deferred.discard(t)
            if future.done():
                return
            if t.cancelled():
                future.cancel()
            elif t.exception() is not None:
                future.set_exception(t.exception())
            else:
                if type(future) is TimedResponse:
                    future.mark_answered()
                future.set_result(t.result())

        task.add_done_callback(done)
