"""Authentication outcomes per listener: 0 until something authenticates, then counted."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.metrics.security_metrics import AuthenticationMetrics, record_authentication
from tests.broker.metrics.samples import registry_of, value

FAILED = "kafka_server_socketservermetrics_failed_authentication_total"
SUCCEEDED = "kafka_server_socketservermetrics_successful_authentication_total"


def test_every_listener_starts_at_zero() -> None:
    registry = registry_of(AuthenticationMetrics(["PLAINTEXT", "INTERNAL"]))
    assert value(registry, FAILED, listener="PLAINTEXT") == 0
    assert value(registry, SUCCEEDED, listener="INTERNAL") == 0


def test_attempts_are_counted_per_listener_and_outcome() -> None:
    metrics = AuthenticationMetrics(["PLAINTEXT"])
    broker = SimpleNamespace(authentication=metrics)
    record_authentication(broker, "SASL", success=False)
    record_authentication(broker, "SASL", success=False)
    record_authentication(broker, "SASL", success=True)
    record_authentication(None, "SASL", success=False)  # metrics off: nothing to count, no error
    registry = registry_of(metrics)
    assert value(registry, FAILED, listener="SASL") == 2
    assert value(registry, SUCCEEDED, listener="SASL") == 1
    assert value(registry, FAILED, listener="PLAINTEXT") == 0
