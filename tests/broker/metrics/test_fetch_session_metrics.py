"""The fetch session cache as Kafka's FetchSessionCache MBeans: sessions, partitions cached, evictions, requests."""

from __future__ import annotations

import random

from prometheus_client import CollectorRegistry, generate_latest

from broker_core.metrics.fetch_session_metrics import FetchSessionCollector
from broker_core.server.fetch_session.cache import FetchSessionCache
from broker_core.server.fetch_session.fetch_manager import FetchManager
from broker_core.server.fetch_session.session import CachedPartition


def exported(manager: FetchManager) -> dict[str, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FetchSessionCollector(manager))
    samples = {}
    for line in generate_latest(registry).decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_the_collector_exports_sessions_partitions_evictions_and_requests_by_kind() -> None:
    cache = FetchSessionCache(max_entries=1, eviction_ms=10, rng=random.Random(3))
    manager = FetchManager(cache, lambda: 0)
    parts = {("t", i): CachedPartition("t", None, request=None) for i in range(4)}
    cache.maybe_create_session(0, False, 4, False, lambda: dict(parts))
    cache.maybe_create_session(100, False, 2, False, lambda: dict(list(parts.items())[:2]))  # evicts the stale one
    manager.requests["incremental"] += 3
    samples = exported(manager)
    prefix = "kafka_server_fetchsessioncache_"
    assert samples[prefix + "numincrementalfetchsessions"] == 1
    assert samples[prefix + "numincrementalfetchpartitionscached"] == 2
    assert samples[prefix + "incrementalfetchsessionevictions_total"] == 1
    assert samples[prefix + 'fetchrequests_total{kind="incremental"}'] == 3
    assert samples[prefix + 'fetchrequests_total{kind="full"}'] == 0
