"""Fetch sessions, as Kafka's ``kafka.server:type=FetchSessionCache`` MBeans show them.

- ``kafka_server_fetchsessioncache_numincrementalfetchsessions``: sessions cached;
- ``kafka_server_fetchsessioncache_numincrementalfetchpartitionscached``: partitions in them;
- ``kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total``: sessions evicted to make room
  (Kafka's ``IncrementalFetchSessionEvictionsPerSec`` meter, as a counter to take a rate of);
- ``kafka_server_fetchsessioncache_fetchrequests_total{kind}``: Fetch requests by how they were served:
  ``full`` (may open a session), ``incremental``, ``sessionless``, ``session_error``.

Read at scrape time on the event loop, which owns the cache.
"""

from __future__ import annotations

from typing import Iterable

from broker_core.server.fetch_session.fetch_manager import FetchManager

PREFIX = "kafka_server_fetchsessioncache_"


class FetchSessionCollector:
    def __init__(self, manager: FetchManager) -> None:
        self._manager = manager

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        cache = self._manager.cache
        yield GaugeMetricFamily(PREFIX + "numincrementalfetchsessions", "Incremental fetch sessions cached.",
                                value=len(cache))
        yield GaugeMetricFamily(PREFIX + "numincrementalfetchpartitionscached",
                                "Partitions held by the cached fetch sessions.", value=cache.total_partitions)
        yield CounterMetricFamily(PREFIX + "incrementalfetchsessionevictions",
                                  "Fetch sessions evicted to make room for others.", value=cache.evictions)
        requests = CounterMetricFamily(PREFIX + "fetchrequests", "Fetch requests by how their session served them.",
                                       labels=["kind"])
        for kind, count in self._manager.requests.items():
            requests.add_metric([kind], count)
        yield requests
