"""A cumulative histogram of durations in milliseconds, cheap enough for the request path.

``prometheus_client``'s own ``Histogram`` takes a lock and walks its label
map on every observation; this one is a list of bucket counts and a sum,
updated from the event loop only (the broker's single writer), and read by
the scrape thread. A scrape may see an observation half-recorded (its bucket
counted, the sum not yet): the next scrape is exact again, which is all
Prometheus needs of a counter.
"""

from __future__ import annotations

from bisect import bisect_left

# Upper bounds in ms, from sub-millisecond local work to request timeouts.
DEFAULT_BUCKETS_MS: tuple[float, ...] = (
    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000,
)


class LatencyHistogram:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...] = DEFAULT_BUCKETS_MS) -> None:
        self.bounds = bounds
        # One count per bound plus the +Inf bucket; each observation lands in exactly one (not cumulative yet).
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value_ms: float) -> None:
        self.counts[bisect_left(self.bounds, value_ms)] += 1
        self.sum += value_ms

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative_buckets(self) -> list[tuple[str, int]]:
        """(le, observations at or below it), ending with +Inf: Prometheus's bucket series."""
        return cumulative_buckets(self.bounds, self.counts)


def cumulative_buckets(bounds: tuple[float, ...], counts: list[int]) -> list[tuple[str, int]]:
    """Per-bucket ``counts`` (one more than ``bounds``, the last for +Inf) as Prometheus's cumulative buckets."""
    buckets = []
    running = 0
    for bound, count in zip(bounds, counts):
        running += count
        buckets.append((_format_bound(bound), running))
    buckets.append(("+Inf", running + counts[-1]))
    return buckets


def _format_bound(bound: float) -> str:
    return repr(float(bound))
