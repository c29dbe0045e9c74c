"""What a Spark query using Spate reports to Prometheus, and the endpoint that serves it.

With the option ``metricsPort`` (source and sink alike) the query's numbers
are served as ``GET /metrics`` on ``metricsHost:metricsPort`` (default host
127.0.0.1). Spark runs a Python data source's driver side in worker
processes of its own (one long-lived process per streaming source, a
short-lived one per sink commit) and its reads in executor tasks, so the
numbers come from several processes: each reports to the endpoint over HTTP
(``POST /report``). The endpoint is served by whichever process started it:
the driver program, with :func:`serve_metrics` (the way to keep it for the
life of the application, and the only one for a query without a Spate
source), else a streaming source's driver process, which starts it when it
plans its first micro-batch and the port is free. Queries naming the same
port share it; their series carry ``query`` (the option ``metricsQuery``,
else the source's ``groupId`` or subscription, the sink's topic):

- ``spate_spark_source_records_read_total{query,topic,partition}`` and
  ``spate_spark_source_bytes_read_total`` (key + value bytes): what the
  source's tasks read, reported by each task when it ends;
- ``spate_spark_source_committed_offset{query,group,topic,partition}`` and
  ``spate_spark_source_group_commits_total{query,group}``: offsets the source
  committed to ``groupId`` (the micro-batches' ends);
- ``spate_spark_sink_commit_time_ms{query}``: a histogram of the exactly-once
  sink's micro-batch commit (its transactions, and the source offsets with them);
- ``spate_spark_sink_records_written_total{query,topic}`` and
  ``spate_spark_sink_transactions_committed_total{query,topic}``.

Reporting is best effort: a report nobody receives is logged and dropped,
never failing a task or a commit. Executors reach the endpoint at
``metricsHost``, so on a cluster of several machines set it to an address
of the driver they can reach.
"""

from __future__ import annotations

import errno
import json
import logging
import threading
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Mapping

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

log = logging.getLogger("spark_ext.query_metrics")

DEFAULT_HOST = "127.0.0.1"
# A report waits at most this long for the endpoint: a task or commit is never held up for long.
REPORT_TIMEOUT_S = 2.0
REPORT_PATH = "/report"
_COMMIT_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)


@dataclass(frozen=True)
class MetricsTarget:
    """Where a query's metrics go: the driver's endpoint, and the query's label. Picklable (executors get it)."""

    host: str
    port: int
    query: str

    @property
    def report_url(self) -> str:
        return f"http://{self.host}:{self.port}{REPORT_PATH}"


class QueryMetrics:
    """The driver's registry of every Spate query's series."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        partition = ["query", "topic", "partition"]
        self.records_read = Counter("spate_spark_source_records_read", "Records the source's tasks read.",
                                    partition, registry=self.registry)
        self.bytes_read = Counter("spate_spark_source_bytes_read", "Key and value bytes the source's tasks read.",
                                  partition, registry=self.registry)
        self.committed_offset = Gauge("spate_spark_source_committed_offset",
                                      "Offset the source last committed to its group.",
                                      ["query", "group", "topic", "partition"], registry=self.registry)
        self.group_commits = Counter("spate_spark_source_group_commits", "Offset commits of the source to its group.",
                                     ["query", "group"], registry=self.registry)
        self.commit_time = Histogram("spate_spark_sink_commit_time_ms",
                                     "Time the exactly-once sink took to commit a micro-batch, in ms.",
                                     ["query"], buckets=_COMMIT_BUCKETS_MS, registry=self.registry)
        self.records_written = Counter("spate_spark_sink_records_written", "Records the sink wrote.",
                                       ["query", "topic"], registry=self.registry)
        self.transactions_committed = Counter("spate_spark_sink_transactions_committed",
                                              "Transactions the exactly-once sink committed.", ["query", "topic"],
                                              registry=self.registry)

    def record_read(self, query: str, topic: str, partition: int, records: int, size: int) -> None:
        labels = (query, topic, str(partition))
        self.records_read.labels(*labels).inc(records)
        self.bytes_read.labels(*labels).inc(size)

    def record_group_commit(self, query: str, group: str, offsets: Mapping[Any, int]) -> None:
        """``offsets``: TopicPartition -> the committed offset."""
        for tp, offset in offsets.items():
            self.committed_offset.labels(query, group, tp.topic, str(tp.partition)).set(offset)
        self.group_commits.labels(query, group).inc()

    def record_sink_commit(self, query: str, topic: str, *, elapsed_ms: float | None, rows: int,
                           transactions: int) -> None:
        """A micro-batch committed; ``elapsed_ms`` is None when nothing was committed transactionally."""
        if elapsed_ms is not None:
            self.commit_time.labels(query).observe(elapsed_ms)
        self.records_written.labels(query, topic).inc(rows)
        self.transactions_committed.labels(query, topic).inc(transactions)

    def apply_report(self, report: Mapping[str, Any]) -> None:
        """A report of another process: ``{"kind": "read" | "group_commit" | "sink_commit", ...}``."""
        kind, query = report["kind"], str(report["query"])
        if kind == "read":
            self.record_read(query, str(report["topic"]), int(report["partition"]), int(report["records"]),
                             int(report["bytes"]))
        elif kind == "group_commit":
            offsets = {_Partition(str(t), int(p)): int(o) for t, p, o in report["offsets"]}
            self.record_group_commit(query, str(report["group"]), offsets)
        elif kind == "sink_commit":
            elapsed = report.get("elapsed_ms")
            self.record_sink_commit(query, str(report["topic"]), elapsed_ms=None if elapsed is None else float(elapsed),
                                    rows=int(report["rows"]), transactions=int(report["transactions"]))
        else:
            raise ValueError(f"unknown report kind {kind!r}")


@dataclass(frozen=True)
class _Partition:
    topic: str
    partition: int


class _Handler(BaseHTTPRequestHandler):
    metrics: QueryMetrics

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path.split("?")[0] not in ("/", "/metrics"):
            self.send_error(404)
            return
        body = generate_latest(self.metrics.registry)
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        if self.path != REPORT_PATH:
            self.send_error(404)
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            self.metrics.apply_report(json.loads(self.rfile.read(length)))
        except (ValueError, KeyError, TypeError) as exc:
            self.send_error(400, str(exc))
            return
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # scrapes every few seconds: keep the log quiet
        pass


class MetricsEndpoint:
    """One HTTP server of the driver, on its own daemon thread."""

    def __init__(self, host: str, port: int) -> None:
        self.metrics = QueryMetrics()
        handler = type("SpateMetricsHandler", (_Handler,), {"metrics": self.metrics})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self.host = host
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, name=f"spate-metrics-{self.port}", daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


_endpoints: dict[tuple[str, int], MetricsEndpoint] = {}
_lock = threading.Lock()


def serve_metrics(port: int, host: str = DEFAULT_HOST) -> str:
    """Serve the Spate queries' metrics from this process (call it in the driver program before starting
    queries that set ``metricsPort`` to ``port``); returns the URL. Raises OSError if the port is taken."""
    with _lock:
        found = _endpoints.get((host, port))
        if found is None:
            found = _endpoints[(host, port)] = MetricsEndpoint(host, port)
    return f"http://{host}:{found.port}/metrics"


def ensure_served(host: str, port: int) -> bool:
    """Serve ``host:port`` from this process unless something already listens there; False if it cannot."""
    try:
        serve_metrics(port, host)
        return True
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            log.warning("cannot serve metrics on %s:%d: %s", host, port, exc)
        return False


def report(target: MetricsTarget, payload: dict[str, Any]) -> None:
    """Count ``payload`` at the query's endpoint: here if this process serves it, else over HTTP."""
    payload = {**payload, "query": target.query}
    local = _endpoints.get((target.host, target.port))
    if local is not None:
        local.metrics.apply_report(payload)
        return
    request = urllib.request.Request(target.report_url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=REPORT_TIMEOUT_S):
            pass
    except OSError as exc:
        log.warning("could not report %s metrics to %s: %s", payload["kind"], target.report_url, exc)
