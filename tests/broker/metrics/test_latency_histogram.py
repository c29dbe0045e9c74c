"""The request path's histogram: one bucket per observation, cumulative when exported."""

from __future__ import annotations

from broker_core.metrics.latency_histogram import LatencyHistogram


def test_observations_land_in_the_first_bucket_at_or_above_them_and_add_to_the_sum() -> None:
    histogram = LatencyHistogram((1, 10))
    for value in (0.5, 1, 3, 50):
        histogram.observe(value)
    assert list(histogram.cumulative_buckets()) == [("1.0", 2), ("10.0", 3), ("+Inf", 4)]
    assert histogram.count == 4
    assert histogram.sum == 54.5


def test_an_empty_histogram_exports_zero_buckets() -> None:
    assert list(LatencyHistogram((1,)).cumulative_buckets()) == [("1.0", 0), ("+Inf", 0)]
