"""Messages and bytes in and out per topic (Kafka's ``kafka.server:type=BrokerTopicMetrics``).

- ``messagesin_total`` / ``bytesin_total``: records and record-batch bytes that
  clients' Produce requests appended on this broker (leader appends; a retried
  batch answered from the idempotence cache counts no more);
- ``messagesout_total`` / ``bytesout_total``: what Fetch answers sent to consumers;
  messages are the offsets a response covers from the fetch offset on (gaps left
  by compaction count, as the broker never decodes the records it sends);
- ``replicationbytesout_total``: what followers fetched from this leader.

Counting is a dictionary update on the event loop; a scrape (on the loop
too) first drops the series of topics that no longer exist.
"""

from __future__ import annotations

from typing import Callable, Iterable

PREFIX = "kafka_server_brokertopicmetrics_"


class BrokerTopicMetrics:
    __slots__ = ("messages_in", "bytes_in", "messages_out", "bytes_out", "replication_bytes_out", "topic_exists")

    def __init__(self) -> None:
        self.messages_in: dict[str, int] = {}
        self.bytes_in: dict[str, int] = {}
        self.messages_out: dict[str, int] = {}
        self.bytes_out: dict[str, int] = {}
        self.replication_bytes_out: dict[str, int] = {}
        # Whether a topic still exists (the broker's metadata); None keeps every topic's series.
        self.topic_exists: Callable[[str], bool] | None = None

    def record_produce(self, topic: str, messages: int, size: int) -> None:
        self.messages_in[topic] = self.messages_in.get(topic, 0) + messages
        self.bytes_in[topic] = self.bytes_in.get(topic, 0) + size

    def record_fetch(self, topic: str, messages: int, size: int, *, follower: bool) -> None:
        if follower:
            self.replication_bytes_out[topic] = self.replication_bytes_out.get(topic, 0) + size
            return
        self.messages_out[topic] = self.messages_out.get(topic, 0) + messages
        self.bytes_out[topic] = self.bytes_out.get(topic, 0) + size

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's series end (Kafka removes its topic metrics too)."""
        for counts in (self.messages_in, self.bytes_in, self.messages_out, self.bytes_out,
                       self.replication_bytes_out):
            counts.pop(topic, None)

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily

        if self.topic_exists is not None:
            counted = set().union(self.messages_in, self.bytes_out, self.replication_bytes_out)
            for topic in [t for t in counted if not self.topic_exists(t)]:
                self.forget_topic(topic)
        series = (
            ("messagesin", "Records appended by clients' Produce requests, per topic.", self.messages_in),
            ("bytesin", "Record-batch bytes appended by clients' Produce requests, per topic.", self.bytes_in),
            ("messagesout", "Records sent to consumers in Fetch responses, per topic.", self.messages_out),
            ("bytesout", "Record-batch bytes sent to consumers in Fetch responses, per topic.", self.bytes_out),
            ("replicationbytesout", "Record-batch bytes sent to follower replicas, per topic.",
             self.replication_bytes_out),
        )
        for name, doc, counts in series:
            family = CounterMetricFamily(PREFIX + name, doc, labels=["topic"])
            for topic, value in sorted(counts.items()):
                family.add_metric([topic], value)
            yield family
