"""Authentication outcomes per listener: 0 until something authenticates, then counted."""

from __future__ import annotations

from broker_core.metrics.security_metrics import AuthenticationMetrics
from broker_core.security.listener_security import AuthenticationCounters
from tests.broker.metrics.samples import registry_of, value

FAILED = "kafka_server_socketservermetrics_failed_authentication_total"
SUCCEEDED = "kafka_server_socketservermetrics_successful_authentication_total"


def test_every_listener_starts_at_zero() -> None:
    registry = registry_of(AuthenticationMetrics(AuthenticationCounters.for_listeners(["PLAINTEXT", "INTERNAL"])))
    assert value(registry, FAILED, listener="PLAINTEXT") == 0
    assert value(registry, SUCCEEDED, listener="INTERNAL") == 0


def test_attempts_are_counted_per_listener_and_outcome() -> None:
    counters = AuthenticationCounters.for_listeners(["PLAINTEXT", "SASL"])
    counters.record("SASL", success=False)
    counters.record("SASL", success=False)
    counters.record("SASL", success=True)
    registry = registry_of(AuthenticationMetrics(counters))
    assert value(registry, FAILED, listener="SASL") == 2
    assert value(registry, SUCCEEDED, listener="SASL") == 1
    assert value(registry, FAILED, listener="PLAINTEXT") == 0
    assert counters.failed_total == 2
