"""The request queue and how busy the event loop is (Kafka's ``RequestChannel`` and ``SocketServer`` MBeans).

- ``kafka_network_requestchannel_requestqueuesize``: requests read and not yet
  taken by a handler task (bounded by ``queued.max.requests``);
- ``kafka_network_socketserver_networkprocessoravgidlepercent``: the fraction
  (0..1) of wall time the broker's event loop spent waiting for I/O in its
  selector since the previous scrape. The loop does the network processors'
  and the request handlers' work alike, so 1 is an idle broker and values
  near 0 a saturated one;
- ``spate_eventloop_idle_seconds_total``: the same waiting time as a counter, for ``rate()``.

Idle time is measured by timing the selector's ``select`` calls that may
block (a zero-timeout poll between ready callbacks is not waiting), the one
place an asyncio loop waits; a loop without a selector reports NaN.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

clock = time.perf_counter


class EventLoopIdle:
    """Time the loop spends in ``select``. Install on the loop's thread; one per broker."""

    def __init__(self) -> None:
        self.idle_s = 0.0
        self.installed = False
        self._selector: Any = None
        self._original: Any = None
        self._wrapper: Any = None
        self._window_start = clock()
        self._window_idle = 0.0

    def install(self, loop: Any) -> bool:
        selector = getattr(loop, "_selector", None)
        original = getattr(selector, "select", None)
        if original is None:
            return False

        def timed_select(timeout: float | None = None) -> Any:
            # A poll with callbacks ready is not waiting; after uninstall this is a plain pass-through.
            if not self.installed or (timeout is not None and timeout <= 0):
                return original(timeout)
            started = clock()
            try:
                return original(timeout)
            finally:
                self.idle_s += clock() - started

        self._selector, self._original, self._wrapper = selector, original, timed_select
        selector.select = timed_select
        self.installed = True
        return True

    def uninstall(self) -> None:
        """Stop timing; the selector gets its own ``select`` back unless another wrapper was put over ours
        (another broker on the same loop), which then keeps calling ours as a pass-through."""
        if self._selector is not None and self._selector.select is self._wrapper:
            self._selector.select = self._original
        self._selector = None
        self.installed = False

    def idle_ratio_since_last_call(self) -> float:
        """Idle fraction of the wall time since the previous call (or since creation)."""
        if not self.installed:
            return float("nan")
        now, idle = clock(), self.idle_s
        elapsed = now - self._window_start
        ratio = (idle - self._window_idle) / elapsed if elapsed > 0 else 1.0
        self._window_start, self._window_idle = now, idle
        return min(1.0, max(0.0, ratio))


class NetworkCollector:
    def __init__(self, idle: EventLoopIdle, queue_size: Callable[[], int]) -> None:
        self._idle = idle
        self._queue_size = queue_size

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        yield GaugeMetricFamily("kafka_network_requestchannel_requestqueuesize",
                                "Requests waiting in the request queue for a handler.", value=self._queue_size())
        yield GaugeMetricFamily("kafka_network_socketserver_networkprocessoravgidlepercent",
                                "Fraction of time the event loop waited for I/O since the previous scrape (0..1).",
                                value=self._idle.idle_ratio_since_last_call())
        yield CounterMetricFamily("spate_eventloop_idle_seconds", "Seconds the event loop waited for I/O.",
                                  value=self._idle.idle_s)
