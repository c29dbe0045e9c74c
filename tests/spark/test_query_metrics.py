"""A Spark query's Prometheus metrics on the driver: the options, the endpoint, the tasks' reports."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

import pyarrow as pa
import pytest

from spark_ext.metrics_options import parse_metrics_options
from spark_ext.options import SourceOptionError, parse_source_options
from spark_ext.query_metrics import MetricsTarget, QueryMetrics, ensure_served, report, serve_metrics
from spark_ext.read_report import batch_bytes, reporting
from spark_ext.sink_options import SinkOptionError, parse_sink_options
from tests.support.metrics_scrape import Scrape, scrape
from tests.support.ports import free_port


def test_metrics_are_off_without_metrics_port() -> None:
    options = parse_source_options({"bootstrap.servers": "b:9092", "subscribe": "t"}, streaming=True)
    assert options.metrics is None


def test_source_and_sink_take_the_metrics_options() -> None:
    source = parse_source_options({"bootstrap.servers": "b:9092", "subscribe": "t", "metricsPort": "9464",
                                   "metricsQuery": "orders-copy"}, streaming=True)
    assert (source.metrics.host, source.metrics.port, source.metrics.query) == ("127.0.0.1", 9464, "orders-copy")
    sink = parse_sink_options({"bootstrap.servers": "b:9092", "topic": "t", "metricsPort": "9464",
                               "metricsHost": "10.0.0.5", "deliveryGuarantee": "at_least_once"}, streaming=True)
    assert (sink.metrics.host, sink.metrics.port, sink.metrics.query) == ("10.0.0.5", 9464, None)


@pytest.mark.parametrize(("opts", "option"), [
    ({"metricsport": "http"}, "metricsPort"),
    ({"metricsport": "70000"}, "metricsPort"),
    ({"metricsport": "0"}, "metricsPort"),  # every process of a query must find the same port
    ({"metricsquery": "q"}, "metricsQuery"),
    ({"metricshost": "h"}, "metricsHost"),
])  # fmt: skip
def test_bad_metrics_options_are_refused_naming_the_option(opts: dict, option: str) -> None:
    with pytest.raises(SourceOptionError) as failure:
        parse_metrics_options(opts, SourceOptionError)
    assert failure.value.option == option
    with pytest.raises(SinkOptionError):
        parse_metrics_options(opts, SinkOptionError)


def test_reports_group_commits_and_sink_commits_become_series() -> None:
    metrics = QueryMetrics()
    metrics.apply_report({"kind": "read", "query": "q", "topic": "t", "partition": 1, "records": 5, "bytes": 50})
    metrics.record_read("q", "t", 1, 2, 20)
    metrics.apply_report({"kind": "group_commit", "query": "q", "group": "g", "offsets": [["t", 1, 7]]})
    metrics.apply_report({"kind": "sink_commit", "query": "q", "topic": "out", "elapsed_ms": 12.0, "rows": 7,
                          "transactions": 2})
    get = metrics.registry.get_sample_value
    assert get("spate_spark_source_records_read_total", {"query": "q", "topic": "t", "partition": "1"}) == 7
    assert get("spate_spark_source_bytes_read_total", {"query": "q", "topic": "t", "partition": "1"}) == 70
    assert get("spate_spark_source_committed_offset", {"query": "q", "group": "g", "topic": "t",
                                                       "partition": "1"}) == 7
    assert get("spate_spark_source_group_commits_total", {"query": "q", "group": "g"}) == 1
    assert get("spate_spark_sink_commit_time_ms_count", {"query": "q"}) == 1
    assert get("spate_spark_sink_commit_time_ms_sum", {"query": "q"}) == 12
    assert get("spate_spark_sink_records_written_total", {"query": "q", "topic": "out"}) == 7
    assert get("spate_spark_sink_transactions_committed_total", {"query": "q", "topic": "out"}) == 2


def test_a_task_passes_its_batches_through_and_reports_records_and_key_value_bytes() -> None:
    port = free_port()
    url = serve_metrics(port)
    assert serve_metrics(port) == url == f"http://127.0.0.1:{port}/metrics"  # one endpoint per port
    batch = pa.RecordBatch.from_pydict({"key": [b"ab", None], "value": [b"xyz", b"1234"]})
    assert batch_bytes(batch) == 9
    target = MetricsTarget("127.0.0.1", port, "reporting-test")
    assert list(reporting(iter([batch, batch]), target, "t", 3)) == [batch, batch]
    scraped = scrape(url)
    labels = {"query": "reporting-test", "topic": "t", "partition": "3"}
    assert scraped.value("spate_spark_source_records_read_total", **labels) == 4
    assert scraped.value("spate_spark_source_bytes_read_total", **labels) == 18


def test_an_unreachable_driver_does_not_fail_the_task() -> None:
    target = MetricsTarget("127.0.0.1", free_port(), "nobody-listens")
    batch = pa.RecordBatch.from_pydict({"key": [b"a"], "value": [b"b"]})
    assert list(reporting(iter([batch]), target, "t", 0)) == [batch]


def test_a_malformed_report_is_refused() -> None:
    port = free_port()
    url = serve_metrics(port)
    request = urllib.request.Request(f"http://127.0.0.1:{port}/report", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as failure:
        urllib.request.urlopen(request, timeout=5)
    assert failure.value.code == 400
    assert isinstance(scrape(url), Scrape)


def test_a_port_another_process_serves_is_reported_to_over_http(tmp_path) -> None:
    port = free_port()
    other = subprocess.Popen([sys.executable, "-c", SERVE_IN_ANOTHER_PROCESS.format(port=port)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "serving"
        assert not ensure_served("127.0.0.1", port)  # taken: this process only reports
        report(MetricsTarget("127.0.0.1", port, "remote"), {"kind": "sink_commit", "topic": "out",
                                                             "elapsed_ms": 3.0, "rows": 4, "transactions": 1})
        scraped = scrape(f"http://127.0.0.1:{port}/metrics")
        assert scraped.value("spate_spark_sink_records_written_total", query="remote", topic="out") == 4
    finally:
        other.kill()
        other.wait()


SERVE_IN_ANOTHER_PROCESS = """
import time
from spark_ext import serve_metrics
serve_metrics({port})
print("serving", flush=True)
time.sleep(60)
"""
