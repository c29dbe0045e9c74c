"""The dispatcher stamps each request's steps when metrics are on; the connection's record closes them."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from broker_core.metrics.request_metrics import RequestMetrics
from broker_core.metrics.request_timing import TimedResponse, clock, record_request
from broker_core.server.dispatch import RequestDispatcher
from spate.protocol.api_keys import ApiKey
from tests.broker.metrics.samples import registry_of, value

P = "kafka_network_requestmetrics_"


def request(api_key: ApiKey, **body: object) -> SimpleNamespace:
    return SimpleNamespace(api_key=api_key, body=SimpleNamespace(**body))


def test_a_parked_request_counts_its_wait_as_remote_time() -> None:
    async def scenario() -> RequestMetrics:
        metrics = RequestMetrics()

        async def parked(_: object) -> SimpleNamespace:
            await asyncio.sleep(0.05)
            return SimpleNamespace(throttle_time_ms=0)

        dispatcher = RequestDispatcher({"L": {ApiKey.FETCH: lambda r: parked(r)}}, queue_size=4, workers=1,
                                       metrics=metrics)
        dispatcher.start()
        fetch = request(ApiKey.FETCH, replica_id=-1)
        future = await dispatcher.submit(fetch, "L")
        assert isinstance(future, TimedResponse)
        body = await future
        record_request(metrics, fetch, future, body, clock())
        await dispatcher.stop()
        return metrics

    registry = registry_of(asyncio.run(scenario()))
    assert value(registry, P + "requests_total", request="FetchConsumer") == 1
    assert value(registry, P + "remotetimems_sum", request="FetchConsumer") >= 40
    assert value(registry, P + "localtimems_sum", request="FetchConsumer") < 40
    assert value(registry, P + "totaltimems_sum", request="FetchConsumer") >= 40


def test_without_metrics_the_dispatcher_hands_out_plain_futures() -> None:
    async def scenario() -> None:
        dispatcher = RequestDispatcher({"L": {ApiKey.METADATA: lambda r: "ok"}}, queue_size=4, workers=1)
        dispatcher.start()
        future = await dispatcher.submit(request(ApiKey.METADATA), "L")
        assert not isinstance(future, TimedResponse) and await future == "ok"
        assert dispatcher.metrics is None
        await dispatcher.stop()

    asyncio.run(scenario())


def test_the_request_queue_size_is_what_waits_for_a_handler() -> None:
    async def scenario() -> None:
        dispatcher = RequestDispatcher({"L": {ApiKey.METADATA: lambda r: "ok"}}, queue_size=4, workers=1)
        for _ in range(3):
            await dispatcher.submit(request(ApiKey.METADATA), "L")
        assert dispatcher.queue_size == 3
        await dispatcher.stop()

    asyncio.run(scenario())
