"""Per-API request counts and phase times, named as Kafka's RequestMetrics."""

from __future__ import annotations

import pytest

from broker_core.metrics.request_metrics import RequestMetrics, request_name
from spate.protocol.api_keys import ApiKey
from tests.broker.metrics.samples import registry_of, value

P = "kafka_network_requestmetrics_"


@pytest.mark.parametrize(("key", "name"), [
    (ApiKey.PRODUCE, "Produce"), (ApiKey.LIST_OFFSETS, "ListOffsets"), (ApiKey.API_VERSIONS, "ApiVersions"),
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, "OffsetForLeaderEpoch"),
])  # fmt: skip
def test_apis_are_named_as_kafka_names_them(key: ApiKey, name: str) -> None:
    assert request_name(key) == name


def test_each_phase_is_the_time_between_two_steps_in_milliseconds() -> None:
    metrics = RequestMetrics()
    # read, taken by a handler, handler returned, answered, writer took it, written (seconds)
    metrics.record(ApiKey.PRODUCE, False, (10.0, 10.002, 10.003, 10.013, 10.014, 10.0145), throttle_ms=0)
    registry = registry_of(metrics)
    assert value(registry, P + "requests_total", request="Produce") == 1
    expected = {"requestqueuetimems": 2, "localtimems": 1, "remotetimems": 10, "responsequeuetimems": 1,
                "responsesendtimems": 0.5, "totaltimems": 14.5, "throttletimems": 0}
    for phase, ms in expected.items():
        assert value(registry, P + phase + "_sum", request="Produce") == pytest.approx(ms, abs=1e-6), phase
        assert value(registry, P + phase + "_count", request="Produce") == 1
    assert value(registry, P + "totaltimems_bucket", request="Produce", le="10.0") == 0
    assert value(registry, P + "totaltimems_bucket", request="Produce", le="25.0") == 1


def test_fetches_are_told_apart_by_who_fetches() -> None:
    metrics = RequestMetrics()
    times = (0.0, 0.0, 0.0, 0.0, 0.0, 0.001)
    metrics.record(ApiKey.FETCH, False, times, 0)
    metrics.record(ApiKey.FETCH, True, times, 0)
    metrics.record(ApiKey.FETCH, True, times, 0)
    registry = registry_of(metrics)
    assert value(registry, P + "requests_total", request="FetchConsumer") == 1
    assert value(registry, P + "requests_total", request="FetchFollower") == 2


def test_throttle_time_is_what_the_response_announced() -> None:
    metrics = RequestMetrics()
    metrics.record(ApiKey.FETCH, False, (0.0,) * 6, throttle_ms=250)
    assert value(registry_of(metrics), P + "throttletimems_sum", request="FetchConsumer") == 250
