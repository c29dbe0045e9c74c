"""Per-API request rate and time (Kafka's ``kafka.network:type=RequestMetrics``).

A request's life is cut where Kafka cuts it, each part a histogram in ms:

- ``requestqueuetimems``: waiting in the request queue for a handler task;
- ``localtimems``: the handler running on the event loop;
- ``remotetimems``: parked (a long-poll fetch, an acks=all produce, a group join);
- ``responsequeuetimems``: answered, waiting for the connection's writer (responses go out in request order);
- ``responsesendtimems``: written to the socket until the transport drained;
- ``totaltimems``: from the request being decoded to its response sent.

``throttletimems`` is the throttle time the response announced, and
``requests_total`` counts requests. Fetches are told apart as Kafka does:
``FetchConsumer`` and ``FetchFollower``. Recording is one call per request,
made by the connection once the response is written.
"""

from __future__ import annotations

from typing import Iterable

from broker_core.metrics.latency_histogram import LatencyHistogram
from spate.protocol.api_keys import ApiKey

PREFIX = "kafka_network_requestmetrics_"
PHASES = ("requestqueuetimems", "localtimems", "remotetimems", "responsequeuetimems", "responsesendtimems",
          "totaltimems", "throttletimems")
_DOCS = {
    "requestqueuetimems": "Time a request waited in the request queue, in ms.",
    "localtimems": "Time a request's handler ran on the event loop, in ms.",
    "remotetimems": "Time a request was parked waiting for other brokers, clients or data, in ms.",
    "responsequeuetimems": "Time an answered request waited for its connection's writer, in ms.",
    "responsesendtimems": "Time writing a response to the socket, in ms.",
    "totaltimems": "Time from a request being read to its response being sent, in ms.",
    "throttletimems": "Throttle time announced in responses, in ms.",
}


def request_name(api_key: ApiKey) -> str:
    """Kafka's name of an API: ``LIST_OFFSETS`` → ``ListOffsets``."""
    return "".join(part.capitalize() for part in api_key.name.split("_"))


_NAMES = {key: request_name(key) for key in ApiKey}


class _ApiStats:
    __slots__ = ("histograms",)

    def __init__(self) -> None:
        self.histograms = tuple(LatencyHistogram() for _ in PHASES)


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
        queue, local, remote, response_queue, send, total, throttle = stats.histograms
        queue.observe((taken - read) * 1000)
        local.observe((returned - taken) * 1000)
        remote.observe((answered - returned) * 1000)
        response_queue.observe((writing - answered) * 1000)
        send.observe((written - writing) * 1000)
        total.observe((written - read) * 1000)
        throttle.observe(throttle_ms)

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        requests = CounterMetricFamily(PREFIX + "requests", "Requests handled, by API.", labels=["request"])
        histograms = [HistogramMetricFamily(PREFIX + phase, _DOCS[phase], labels=["request"]) for phase in PHASES]
        for name, stats in sorted(self._stats.items()):
            requests.add_metric([name], stats.histograms[0].count)
            for family, histogram in zip(histograms, stats.histograms):
                family.add_metric([name], list(histogram.cumulative_buckets()), histogram.sum)
        return [requests, *histograms]
