"""A broker's metrics: the hot-path counters, the state collectors and the ``/metrics`` endpoint.

One instance per broker, with its own ``CollectorRegistry`` (brokers sharing
a process never share numbers). The broker builds it when
``metrics.http.listener`` is set and hands it to the request path (the
dispatcher, the connections and the Produce and Fetch handlers count into
it); with the property unset there is no instance and the request path skips
every metrics call.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from prometheus_client import CollectorRegistry, generate_latest, start_http_server

from broker_core.config.errors import ConfigError
from broker_core.metrics.archive_metrics import ArchiveCollector
from broker_core.metrics.controller_metrics import ControllerCollector
from broker_core.metrics.group_metrics import GroupCollector
from broker_core.metrics.listener_address import PROPERTY, MetricsListener
from broker_core.metrics.log_flush_metrics import LogFlushMetrics
from broker_core.metrics.loop_collector import Collector, LoopCollector
from broker_core.metrics.network_metrics import EventLoopIdle, NetworkCollector
from broker_core.metrics.replica_metrics import ReplicaCollector
from broker_core.metrics.request_metrics import RequestMetrics
from broker_core.metrics.security_metrics import AuthenticationMetrics
from broker_core.metrics.topic_metrics import BrokerTopicMetrics
from broker_core.metrics.transaction_metrics import TransactionCollector
from broker_core.security.listener_security import AuthenticationCounters


class BrokerMetrics:
    def __init__(self, authentications: AuthenticationCounters | None = None) -> None:
        self.topics = BrokerTopicMetrics()
        self.requests = RequestMetrics()
        self.authentication = AuthenticationMetrics(authentications or AuthenticationCounters())
        self.log_flush = LogFlushMetrics()
        self.event_loop = EventLoopIdle()
        self.registry = CollectorRegistry(auto_describe=False)
        self._collectors: list[Collector] = [self.topics, self.requests, self.authentication, self.log_flush]
        self._registered = False
        self._server: Any = None
        self.url: str | None = None

    def watch(self, collector: Collector) -> None:
        """Add a collector of broker state; it runs on the event loop at each scrape."""
        self._collectors.append(collector)

    def watch_broker(self, *, queue_size: Callable[[], int], replicas: Any, isr_changes: Callable[[], tuple[int, int]],
                     is_controller: Callable[[], bool], view: Any, group_manager: Any, txn_state: Any) -> None:
        """Watch every part of a running broker: the request queue, the replica manager, the controller's view,
        the group and transaction coordinators."""
        self.topics.topic_exists = lambda topic: view.partition_count(topic) is not None
        self.watch(NetworkCollector(self.event_loop, queue_size))
        self.watch(ReplicaCollector(replicas, isr_changes))
        self.watch(ArchiveCollector(replicas))
        self.watch(ControllerCollector(is_controller, view))
        self.watch(GroupCollector(group_manager, replicas))
        self.watch(TransactionCollector(txn_state, replicas))

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Collect on ``loop`` (call on its thread) and time its idle waits."""
        if not self._registered:
            self.registry.register(LoopCollector(loop, self._collectors))
            self._registered = True
        self.event_loop.install(loop)

    def serve(self, listener: MetricsListener) -> str:
        """Serve ``GET /metrics`` from a thread of its own; returns its URL. A bind failure is a ConfigError
        naming ``metrics.http.listener``."""
        try:
            server, _ = start_http_server(listener.port, addr=listener.host, registry=self.registry)
        except OSError as exc:
            raise ConfigError(f"cannot serve metrics on {listener.host}:{listener.port}: {exc}",
                              key=PROPERTY) from exc
        self._server = server
        self.url = MetricsListener(listener.host, server.server_port).url
        return self.url

    def close(self) -> None:
        """Stop the endpoint (blocks up to half a second: call off the loop) and the idle timing."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def stop_timing(self) -> None:
        """Give the loop its own selector back (call on the loop's thread)."""
        self.event_loop.uninstall()

    def exposition(self) -> bytes:
        """What ``GET /metrics`` answers, in Prometheus text format."""
        return generate_latest(self.registry)
