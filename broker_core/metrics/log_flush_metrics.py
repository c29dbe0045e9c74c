"""How long flushing logs to disk takes (Kafka's ``kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs``).

``kafka_log_logflushstats_logflushtimems`` is a histogram in ms of the
broker's flush passes that flushed at least one log (the scheduler's
``flush.ms`` and rolled-segment fsyncs), and ``..._logsflushed_total`` the
logs those passes flushed. Flushes a topic's ``flush.messages`` forces inline
on an append are part of that append's Produce time instead.
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable, Iterable

from broker_core.metrics.latency_histogram import LatencyHistogram


class LogFlushMetrics:
    def __init__(self) -> None:
        self.flush_time = LatencyHistogram()
        self.logs_flushed = 0

    def timed(self, flush: Callable[[], int]) -> int:
        """Run one flush pass (returns the logs it flushed) and record its time when it flushed any."""
        started = time.perf_counter()
        flushed = flush()
        if flushed:
            self.flush_time.observe((time.perf_counter() - started) * 1000)
            self.logs_flushed += flushed
        return flushed

    async def timed_async(self, flush: Callable[[], Awaitable[int]]) -> int:
        """``timed`` for a flush pass whose fsyncs run on another thread (the time is the pass's wall time)."""
        started = time.perf_counter()
        flushed = await flush()
        if flushed:
            self.flush_time.observe((time.perf_counter() - started) * 1000)
            self.logs_flushed += flushed
        return flushed

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        histogram = self.flush_time
        family = HistogramMetricFamily("kafka_log_logflushstats_logflushtimems",
                                       "Time of the flush passes that fsynced logs, in ms.")
        family.add_metric([], list(histogram.cumulative_buckets()), histogram.sum)
        yield family
        yield CounterMetricFamily("kafka_log_logflushstats_logsflushed", "Logs fsynced by flush passes.",
                                  value=self.logs_flushed)
