"""Per-API request rate and time (Kafka's ``kafka.network:type=RequestMetrics``).

A request's life is cut where Kafka cuts it, each part a histogram in ms:

- ``requestqueuetimems``: waiting in the request queue for a handler task;
- ``localtimems``: the handler running on the event loop;
- ``remotetimems``: parked (a long-poll fetch, an acks=all produce, a group join);
- ``responsequeuetimems``: answered, waiting for the connection's writer (responses go out in request order);
- ``responsesendtimems``: written to the socket until the transport drained;
- ``totaltimems``: from the request being decoded to its response sent.

``throttletimems`` (a summary: ``_sum`` and ``_count``) is the throttle time
the responses announced, and ``requests_total`` counts requests. Fetches are told apart as Kafka does:
``FetchConsumer`` and ``FetchFollower``. Recording is one call per request,
made by the connection once the response is written.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable

from broker_core.metrics.latency_histogram import DEFAULT_BUCKETS_MS as BUCKETS_MS
from broker_core.metrics.latency_histogram import cumulative_buckets
from spate.protocol.api_keys import ApiKey

PREFIX = "kafka_network_requestmetrics_"
# Histograms, in the order ``record`` computes them.
PHASES = ("requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems", "responsesendtimems",
          "totaltimems")
_DOCS = {
    "requestqueuetimems": "Time a request waited in the request queue, in ms.",
    "localtimems": "Time a request's handler ran on the event loop, in ms.",
    "remotetimems": "Time a request was parked waiting for other brokers, clients or data, in ms.",
    "responsequeuetimems": "Time an answered request waited for its connection's writer, in ms.",
    "responsesendtimems": "Time writing a response to the socket, in ms.",
    "totaltimems": "Time from a request being read to its response being sent, in ms.",
}


def request_name(api_key: ApiKey) -> str:
    """Kafka's name of an API: ``LIST_OFFSETS`` → ``ListOffsets``."""
    return "".join(part.capitalize() for part in api_key.name.split("_"))


_NAMES = {key: request_name(key) for key in ApiKey}


class _ApiStats:
    """One API's phase histograms (bucket counts and sums, in ``PHASES`` order) and its throttle time as a
    sum (a summary: its mean is what matters)."""

    __slots__ = ("counts", "sums", "throttle_ms")

    def __init__(self) -> None:
        self.counts = tuple([0] * (len(BUCKETS_MS) + 1) for _ in PHASES)
        self.sums = [0.0] * len(PHASES)
        self.throttle_ms = 0.0


class RequestMetrics:
    """Every API's request count and phase times; recorded on the event loop only."""

    def __init__(self) -> None:
        self._stats: dict[str, _ApiStats] = {}

    def record(self, api_key: ApiKey, follower: bool, times: tuple[float, float, float, float, float, float],
               throttle_ms: float) -> None:
        """One request done. ``times`` are ``perf_counter`` seconds: read, taken by a handler, handler
        returned, answered, writer took the answer, written."""
        if api_key is ApiKey.FETCH:
            name = "FetchFollower" if follower else "FetchConsumer"
        else:
            name = _NAMES.get(api_key) or str(api_key)
        stats = self._stats.get(name)
        if stats is None:
            stats = self._stats[name] = _ApiStats()
        read, taken, returned, answered, writing, written = times
        # Unrolled: this runs once per request, and a loop would cost it half again.
        b, c, s = BUCKETS_MS, stats.counts, stats.sums
        ms = (taken - read) * 1000.0
        c[0][bisect_left(b, ms)] += 1
        s[0] += ms
        ms = (returned - taken) * 1000.0
        c[1][bisect_left(b, ms)] += 1
        s[1] += ms
        ms = (answered - returned) * 1000.0
        c[2][bisect_left(b, ms)] += 1
        s[2] += ms
        ms = (writing - answered) * 1000.0
        c[3][bisect_left(b, ms)] += 1
        s[3] += ms
        ms = (written - writing) * 1000.0
        c[4][bisect_left(b, ms)] += 1
        s[4] += ms
        ms = (written - read) * 1000.0
        c[5][bisect_left(b, ms)] += 1
        s[5] += ms
        stats.throttle_ms += throttle_ms

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, SummaryMetricFamily

        requests = CounterMetricFamily(PREFIX + "requests", "Requests handled, by API.", labels=["request"])
        histograms = [HistogramMetricFamily(PREFIX + phase, _DOCS[phase], labels=["request"]) for phase in PHASES]
        throttle = SummaryMetricFamily(PREFIX + "throttletimems", "Throttle time announced in responses, in ms.",
                                       labels=["request"])
        for name, stats in sorted(self._stats.items()):
            count = sum(stats.counts[0])
            requests.add_metric([name], count)
            for family, counts, total in zip(histograms, stats.counts, stats.sums):
                family.add_metric([name], cumulative_buckets(BUCKETS_MS, counts), total)
            throttle.add_metric([name], count_value=count, sum_value=stats.throttle_ms)
        return [requests, *histograms, throttle]
