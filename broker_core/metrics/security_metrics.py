"""Authentication outcomes per listener (Kafka's ``socket-server-metrics`` ``successful-``/``failed-authentication-total``).

The SASL gates count into the socket server's :class:`AuthenticationCounters`;
this collector reads them at each scrape. Every listener has its series from
the start (0 on listeners that do not authenticate), so dashboards and alerts
can be set up before anything logs in.
"""

from __future__ import annotations

from typing import Iterable

from broker_core.security.listener_security import AuthenticationCounters


class AuthenticationMetrics:
    def __init__(self, counters: AuthenticationCounters) -> None:
        self.counters = counters

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily

        for name, doc, counts in (
            ("failed_authentication", "Connections that failed to authenticate, per listener.", self.counters.failed),
            ("successful_authentication", "Connections that authenticated, per listener.",
             self.counters.successful),
        ):
            family = CounterMetricFamily(f"kafka_server_socketservermetrics_{name}", doc, labels=["listener"])
            for listener, value in sorted(counts.items()):
                family.add_metric([listener], value)
            yield family
