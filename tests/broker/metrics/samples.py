"""Reading what a collector exports, as Prometheus would see it."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry


def registry_of(*collectors: Any) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    for collector in collectors:
        registry.register(collector)
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)
