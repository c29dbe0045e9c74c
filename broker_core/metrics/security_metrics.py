"""Authentication outcomes per listener (Kafka's ``socket-server-metrics`` ``successful-``/``failed-authentication-total``).

Every listener is PLAINTEXT today, so nothing authenticates and the counters
stay at 0 (each listener's series is there from the start, so dashboards and
alerts can be set up now). Whatever authenticates connections calls
:func:`record_authentication` with the broker's metrics (None when they are
off) after each attempt.
"""

from __future__ import annotations

from typing import Iterable


class AuthenticationMetrics:
    def __init__(self, listeners: Iterable[str] = ()) -> None:
        self.failed: dict[str, int] = {name: 0 for name in listeners}
        self.succeeded: dict[str, int] = {name: 0 for name in listeners}

    def record(self, listener: str, *, success: bool) -> None:
        counts = self.succeeded if success else self.failed
        counts[listener] = counts.get(listener, 0) + 1
        other = self.failed if success else self.succeeded
        other.setdefault(listener, 0)

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily

        for name, doc, counts in (
            ("failed_authentication", "Connections that failed to authenticate, per listener.", self.failed),
            ("successful_authentication", "Connections that authenticated, per listener.", self.succeeded),
        ):
            family = CounterMetricFamily(f"kafka_server_socketservermetrics_{name}", doc, labels=["listener"])
            for listener, value in sorted(counts.items()):
                family.add_metric([listener], value)
            yield family


def record_authentication(metrics: object | None, listener: str, *, success: bool) -> None:
    """Count one authentication attempt on ``listener``; ``metrics`` is the broker's ``BrokerMetrics`` or None."""
    if metrics is not None:
        metrics.authentication.record(listener, success=success)  # type: ignore[attr-defined]
