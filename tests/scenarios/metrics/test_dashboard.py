"""The shipped Grafana dashboard and Prometheus config read only what a real broker exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.scenarios.metrics.conftest import MeteredBroker
from tests.support.metrics_scrape import scrape
from tests.support.promql_names import label_values_metric, metric_names

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]
DASHBOARD = REPO / "platform" / "grafana" / "dashboards" / "spate.json"
PROMETHEUS = REPO / "platform" / "prometheus" / "prometheus.yml"
ROWS = {"Overview", "Topics", "Consumer groups", "Replication", "Request latencies"}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def queries(board: dict) -> list[tuple[str, str]]:
    """(where, PromQL) for every panel target and every variable query."""
    found = [(f"panel {p['title']!r}", t["expr"]) for p in board["panels"] for t in p.get("targets", [])]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
            metric = label_values_metric(query)
            assert metric is not None, f"variable {variable['name']}: {query}"
            found.append((f"variable {variable['name']!r}", metric))
    return found


@pytest.mark.parametrize(("expr", "names"), [
    ("sum(rate(a_total[$__rate_interval]))", {"a_total"}),
    ('histogram_quantile(0.99, sum by (le, request) (rate(b_bucket{request=~"$request"}[5m])))', {"b_bucket"}),
    ("sum by (topic) (c) / ignoring(x) d offset 5m", {"c", "d"}),
    ('e{l="x(y)"} and on(instance) f > bool 1', {"e", "f"}),
])  # fmt: skip
def test_metric_names_are_found_in_promql(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_the_dashboard_has_the_five_sections_and_every_panel_queries_something() -> None:
    board = dashboard()
    assert {p["title"] for p in board["panels"] if p["type"] == "row"} == ROWS
    for panel in board["panels"]:
        if panel["type"] != "row":
            assert panel["targets"] and all(t["expr"].strip() for t in panel["targets"]), panel["title"]


def test_every_dashboard_query_names_only_metrics_the_broker_exports(traffic: MeteredBroker) -> None:
    exported = scrape(traffic.metrics_url).names
    missing = {
        f"{where}: {name}"
        for where, expr in queries(dashboard())
        for name in metric_names(expr)
        if name not in exported
    }
    assert missing == set()


def test_the_prometheus_config_scrapes_the_metrics_path_of_spate_brokers() -> None:
    text = PROMETHEUS.read_text()
    assert re.search(r"^\s*-\s*job_name:\s*spate\s*$", text, re.M)
    assert re.search(r"^\s*metrics_path:\s*/metrics\s*$", text, re.M)
    assert re.findall(r"^\s*-\s*127\.0\.0\.1:\d+\s*$", text, re.M)
