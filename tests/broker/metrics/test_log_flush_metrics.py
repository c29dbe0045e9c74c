"""Flush passes that flushed logs are timed; empty ones are not."""

from __future__ import annotations

from broker_core.metrics.log_flush_metrics import LogFlushMetrics
from tests.broker.metrics.samples import registry_of, value


def test_only_passes_that_flushed_something_are_timed() -> None:
    metrics = LogFlushMetrics()
    assert metrics.timed(lambda: 0) == 0
    assert metrics.timed(lambda: 3) == 3
    registry = registry_of(metrics)
    assert value(registry, "kafka_log_logflushstats_logflushtimems_count") == 1
    assert value(registry, "kafka_log_logflushstats_logsflushed_total") == 3
