"""Messages and bytes in and out per topic (BrokerTopicMetrics)."""

from __future__ import annotations

from broker_core.metrics.topic_metrics import BrokerTopicMetrics
from tests.broker.metrics.samples import registry_of, value

P = "kafka_server_brokertopicmetrics_"


def test_produce_and_consumer_fetch_count_per_topic() -> None:
    metrics = BrokerTopicMetrics()
    metrics.record_produce("a", 3, 300)
    metrics.record_produce("a", 2, 100)
    metrics.record_produce("b", 1, 10)
    metrics.record_fetch("a", 4, 350, follower=False)
    registry = registry_of(metrics)
    assert value(registry, P + "messagesin_total", topic="a") == 5
    assert value(registry, P + "bytesin_total", topic="a") == 400
    assert value(registry, P + "messagesin_total", topic="b") == 1
    assert value(registry, P + "messagesout_total", topic="a") == 4
    assert value(registry, P + "bytesout_total", topic="a") == 350


def test_follower_fetches_count_as_replication_not_as_consumption() -> None:
    metrics = BrokerTopicMetrics()
    metrics.record_fetch("a", 4, 350, follower=True)
    registry = registry_of(metrics)
    assert value(registry, P + "replicationbytesout_total", topic="a") == 350
    assert value(registry, P + "bytesout_total", topic="a") is None


def test_a_forgotten_topic_has_no_series() -> None:
    metrics = BrokerTopicMetrics()
    metrics.record_produce("a", 1, 1)
    metrics.forget_topic("a")
    assert value(registry_of(metrics), P + "messagesin_total", topic="a") is None


def test_a_deleted_topic_series_end_at_the_next_scrape() -> None:
    metrics = BrokerTopicMetrics()
    metrics.record_produce("kept", 1, 1)
    metrics.record_produce("deleted", 1, 1)
    metrics.record_fetch("deleted", 1, 1, follower=False)
    metrics.topic_exists = lambda topic: topic == "kept"
    registry = registry_of(metrics)
    assert value(registry, P + "messagesin_total", topic="kept") == 1
    assert value(registry, P + "messagesin_total", topic="deleted") is None
    assert value(registry, P + "bytesout_total", topic="deleted") is None
