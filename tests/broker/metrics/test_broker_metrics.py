"""The /metrics endpoint of one broker: its own registry, served over HTTP, a clear error when it cannot bind."""

from __future__ import annotations

import asyncio
import socket
import urllib.request

import pytest

from broker_core.config.errors import ConfigError
from broker_core.metrics.broker_metrics import BrokerMetrics
from broker_core.metrics.listener_address import MetricsListener


def test_metrics_are_served_over_http_in_prometheus_text_format() -> None:
    async def scenario() -> None:
        metrics = BrokerMetrics(["PLAINTEXT"])
        metrics.attach(asyncio.get_running_loop())
        url = metrics.serve(MetricsListener("127.0.0.1", 0))
        try:
            metrics.topics.record_produce("orders", 3, 120)
            response = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5))
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain")
            text = response.read().decode()
            assert 'kafka_server_brokertopicmetrics_messagesin_total{topic="orders"} 3.0' in text
        finally:
            metrics.stop_timing()
            await asyncio.to_thread(metrics.close)

    asyncio.run(scenario())


def test_two_brokers_in_one_process_keep_their_numbers_apart() -> None:
    first, second = BrokerMetrics(), BrokerMetrics()
    first.topics.record_produce("a", 1, 1)

    async def scenario() -> tuple[bytes, bytes]:
        loop = asyncio.get_running_loop()
        first.attach(loop)
        second.attach(loop)
        return first.exposition(), second.exposition()

    one, two = asyncio.run(scenario())
    assert b'topic="a"' in one and b'topic="a"' not in two


def test_a_listener_that_cannot_be_bound_is_a_config_error_naming_the_property() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError) as failure:
            BrokerMetrics().serve(MetricsListener("127.0.0.1", port))
    assert "metrics.http.listener" in str(failure.value)
