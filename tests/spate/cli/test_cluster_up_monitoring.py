"""``spate cluster up --monitoring``: every broker serves /metrics, and Prometheus is told where to scrape."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from spate.cli.monitoring import free_ports, prometheus_config
from tests.spate.cli.test_cluster_up import EMBEDDED, ClusterUp, assert_all_stopped, launch
from tests.support.metrics_scrape import scrape
from tests.support.zookeeper import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture
def launched() -> Iterator[list[ClusterUp]]:
    """``cluster up`` processes of one test; whatever still runs at the end is killed."""
    started: list[ClusterUp] = []
    yield started
    for cluster in started:
        cluster.kill()


def test_free_ports_are_distinct_and_avoid_the_ones_taken() -> None:
    ports = free_ports(3, avoid={9092})
    assert len(set(ports)) == 3 and 9092 not in ports


def test_the_prometheus_config_names_every_broker_as_a_target() -> None:
    text = prometheus_config([9404, 9405])
    assert "job_name: spate" in text and "metrics_path: /metrics" in text
    assert re.findall(r"- (127\.0\.0\.1:\d+)", text) == ["127.0.0.1:9404", "127.0.0.1:9405"]


def test_monitoring_gives_every_broker_a_metrics_endpoint_and_writes_the_scrape_config(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--monitoring", "--no-status", "--output", "json", *EMBEDDED)
    started = json.loads(cluster.wait_up())
    urls = [broker["metrics"] for broker in started["brokers"]]
    assert len(urls) == 1
    scraped = scrape(urls[0])
    assert scraped.value("kafka_controller_kafkacontroller_activecontrollercount") == 1
    config = (tmp_path / "cluster" / "prometheus.yml").read_text()
    assert started["prometheus_config"] == str(tmp_path / "cluster" / "prometheus.yml")
    assert re.findall(r"- (127\.0\.0\.1:\d+)", config) == [url.split("/")[2] for url in urls]
    assert "prometheus --config.file=" in cluster.stderr
    assert cluster.stop() == 0, cluster.stderr
    assert_all_stopped(cluster)


def test_monitoring_on_a_cluster_prints_where_to_point_prometheus_and_grafana(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--monitoring", "--no-status", brokers=2)
    cluster.wait_up()
    urls = re.findall(r"http://127\.0\.0\.1:\d+/metrics", cluster.stderr)
    assert len(urls) == 2
    wait_until(lambda: sum(scrape(url).value("kafka_controller_kafkacontroller_activecontrollercount")
                           for url in urls) == 1, "one broker to report itself the active controller", timeout_s=60)
    assert "spate.json" in cluster.stderr
    assert "spate console --bootstrap-server 127.0.0.1:" in cluster.stderr
    assert cluster.stop() == 0, cluster.stderr
