"""GET /metrics on a real broker process, after a real client produced and consumed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.scenarios.metrics.conftest import CONSUMED, GROUP, PRODUCED, TOPIC, MeteredBroker, produce
from tests.support.metrics_scrape import scrape

pytestmark = pytest.mark.timeout(120)

BTM = "kafka_server_brokertopicmetrics_"
REQUESTS = "kafka_network_requestmetrics_requests_total"


def test_messages_in_per_topic_equal_the_records_produced(traffic: MeteredBroker) -> None:
    scraped = scrape(traffic.metrics_url)
    assert scraped.value(BTM + "messagesin_total", topic=TOPIC) == PRODUCED
    assert scraped.value(BTM + "bytesin_total", topic=TOPIC) > PRODUCED * len(b"record-0")


def test_messages_out_cover_at_least_what_the_consumer_read(traffic: MeteredBroker) -> None:
    scraped = scrape(traffic.metrics_url)
    assert CONSUMED <= scraped.value(BTM + "messagesout_total", topic=TOPIC) <= PRODUCED
    assert scraped.value(BTM + "bytesout_total", topic=TOPIC) > 0


def test_lag_is_what_the_group_left_unconsumed(traffic: MeteredBroker) -> None:
    scraped = scrape(traffic.metrics_url)
    assert scraped.value("kafka_consumergroup_lag", group=GROUP, topic=TOPIC, partition="0") == PRODUCED - CONSUMED
    assert scraped.value("kafka_consumergroup_current_offset", group=GROUP, topic=TOPIC, partition="0") == CONSUMED


def test_a_single_broker_has_nothing_under_replicated_and_is_the_controller(traffic: MeteredBroker) -> None:
    scraped = scrape(traffic.metrics_url)
    assert scraped.value("kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert scraped.value("kafka_server_replicamanager_underminisrpartitioncount") == 0
    assert scraped.value("kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert scraped.value("kafka_server_replicamanager_leadercount") >= 1
    assert scraped.value("kafka_log_log_logendoffset", topic=TOPIC, partition="0") == PRODUCED
    assert scraped.value("kafka_log_log_size", topic=TOPIC, partition="0") > 0


def test_request_counts_per_api_move_with_traffic(traffic: MeteredBroker) -> None:
    before = scrape(traffic.metrics_url)
    for api in ("Produce", "FetchConsumer", "OffsetCommit", "Metadata", "ApiVersions"):
        assert before.value(REQUESTS, request=api) >= 1, api
    produce(traffic.broker.bootstrap, "metered-more", 5)
    after = scrape(traffic.metrics_url)
    assert after.value(REQUESTS, request="Produce") > before.value(REQUESTS, request="Produce")
    assert after.value(BTM + "messagesin_total", topic="metered-more") == 5
    # Every request lands in the total-time histogram.
    assert after.value("kafka_network_requestmetrics_totaltimems_count", request="Produce") == \
        after.value(REQUESTS, request="Produce")


def test_the_event_loop_idle_ratio_is_a_fraction(traffic: MeteredBroker) -> None:
    idle = scrape(traffic.metrics_url).value("kafka_network_socketserver_networkprocessoravgidlepercent")
    assert 0.0 <= idle <= 1.0


def test_groups_are_counted_by_state(traffic: MeteredBroker) -> None:
    scraped = scrape(traffic.metrics_url)
    # The group only committed offsets (it never joined): it is Empty.
    assert scraped.value("kafka_coordinator_group_groupmetadatamanager_numgroups", state="Empty") >= 1


def test_a_bad_metrics_listener_stops_the_broker_with_a_message_naming_it(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spate.cli.main", "broker", "start",
         "--override", f"log.dirs={tmp_path / 'logs'}", "--override", "listeners=PLAINTEXT://127.0.0.1:0",
         "--override", "metrics.http.listener=localhost:9404"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    assert "metrics.http.listener" in done.stderr
