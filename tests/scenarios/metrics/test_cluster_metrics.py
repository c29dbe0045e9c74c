"""Metrics across a three-broker cluster: one active controller, and a stopped broker shows as under-replication."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from spate.protocol.errors import ErrorCode
from tests.scenarios.metrics.conftest import consume_and_commit, produce
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests, restart_stopped_brokers, settled_cluster
from tests.support.metrics_scrape import scrape
from tests.support.ports import free_port
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = pytest.mark.timeout(240)

UNDER_REPLICATED = "kafka_server_replicamanager_underreplicatedpartitions"


@pytest.fixture
def healthy(metered_cluster: ClusterForTests) -> Iterator[ClusterForTests]:
    """The cluster, with every broker running again after the test."""
    yield metered_cluster
    restart_stopped_brokers(metered_cluster)


@pytest.fixture(scope="module")
def metered_cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    ports = {broker_id: free_port() for broker_id in (1, 2, 3)}
    with settled_cluster(
        tmp_path_factory.mktemp("metered-cluster"), zookeeper, brokers=3,
        overrides={"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
                   "replica.lag.time.max.ms": "2000"},
        broker_overrides={i: {"metrics.http.listener": f"http://127.0.0.1:{port}"} for i, port in ports.items()},
    ) as cluster:
        cluster.metrics_urls = {i: f"http://127.0.0.1:{port}/metrics" for i, port in ports.items()}
        yield cluster


def under_replicated(cluster: ClusterForTests, broker_ids: list[int]) -> float:
    return sum(scrape(cluster.metrics_urls[i]).value(UNDER_REPLICATED) for i in broker_ids)


def test_exactly_one_broker_is_the_active_controller(metered_cluster: ClusterForTests) -> None:
    cluster = metered_cluster
    counts = {i: scrape(url).value("kafka_controller_kafkacontroller_activecontrollercount")
              for i, url in cluster.metrics_urls.items()}
    assert sum(counts.values()) == 1
    assert counts[cluster.controller_id()] == 1


def test_followers_replicate_through_incremental_fetch_sessions(metered_cluster: ClusterForTests, topic_name) -> None:
    cluster, topic = metered_cluster, topic_name()
    assert create_topic(cluster.address(1), topic, partitions=6, replication_factor=3).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    cache = "kafka_server_fetchsessioncache_"

    def incremental_fetches() -> dict[int, float]:
        return {i: scrape(url).sum(cache + "fetchrequests_total", kind="incremental")
                for i, url in cluster.metrics_urls.items()}

    before = incremental_fetches()
    cluster.wait_for(lambda: all(after > before[i] for i, after in incremental_fetches().items()),
                     "every leader to serve its followers incremental fetches", timeout=30)
    for url in cluster.metrics_urls.values():
        assert scrape(url).value(cache + "numincrementalfetchsessions") >= 1


def test_stopping_a_broker_makes_under_replicated_partitions_appear_on_the_others(
    healthy: ClusterForTests, topic_name
) -> None:
    cluster = healthy
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, partitions=3, replication_factor=3).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    everyone = sorted(cluster.brokers)
    cluster.wait_for(lambda: under_replicated(cluster, everyone) == 0, "every ISR to be full")
    total_partitions = sum(scrape(cluster.metrics_urls[i]).value("kafka_server_replicamanager_partitioncount")
                           for i in everyone)
    assert total_partitions >= 9  # 3 partitions x 3 replicas, plus internal topics'

    stopped = 3
    assert cluster.stop(stopped) == 0
    survivors = [i for i in everyone if i != stopped]
    # New records leave the stopped replica behind, so a leader that still counts it in sync (an ISR
    # expansion racing the controlled shutdown) drops it after replica.lag.time.max.ms.
    producer = Producer({"bootstrap.servers": ",".join(cluster.address(i) for i in survivors), "acks": "1"})
    for partition in range(3):
        producer.produce(topic, b"after the stop", partition=partition)
    assert producer.flush(30) == 0
    cluster.wait_for(lambda: under_replicated(cluster, survivors) >= 3,
                     f"the partitions of {topic} to be under-replicated on brokers {survivors}", timeout=60)
    leaders = sum(scrape(cluster.metrics_urls[i]).value("kafka_server_replicamanager_leadercount") for i in survivors)
    assert leaders >= 3


def test_the_group_coordinator_alone_reports_the_lag_of_a_replicated_partition(
    metered_cluster: ClusterForTests, topic_name
) -> None:
    cluster = metered_cluster
    topic, group = topic_name(), topic_name()
    assert create_topic(cluster.address(1), topic, partitions=1, replication_factor=3).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    bootstrap = ",".join(cluster.address(i) for i in cluster.live_ids())
    produce(bootstrap, topic, 10)
    consume_and_commit(bootstrap, topic, group, 4)

    def lag_reports() -> list[float]:
        return [value for i in cluster.live_ids()
                if (value := scrape(cluster.metrics_urls[i]).value("kafka_consumergroup_lag", group=group,
                                                                    topic=topic, partition="0")) is not None]

    assert cluster.wait_for(lambda: lag_reports() == [6], "the coordinator to report a lag of 6")
