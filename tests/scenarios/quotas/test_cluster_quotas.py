"""Client quotas in a ZooKeeper cluster: set through one broker, described and enforced by another, which
learns of them from the change notification."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spate.client import Admin
from spate.client.admin.quota_admin import ClientQuotaAlteration
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    base: Path = tmp_path_factory.mktemp("quota-cluster")
    cluster = ClusterForTests(base, zookeeper, brokers=2)
    try:
        cluster.start()
        cluster.wait_for(cluster.controller_id, "a controller to be elected")
        cluster.wait_for_metadata()
        yield cluster
    finally:
        cluster.close()


def test_a_quota_set_through_one_broker_is_enforced_by_another(cluster: ClusterForTests) -> None:
    from confluent_kafka import Producer

    with Admin(cluster.address(1)) as admin:
        admin.alter_client_quotas([ClientQuotaAlteration({"client-id": "capped"}, {"producer_byte_rate": 50_000})])
    with Admin(cluster.address(2)) as admin:
        described = cluster.wait_for(lambda: admin.describe_client_quotas({"client-id": "capped"}),
                                     "broker 2 to describe the quota")
    assert [(e.entity, e.values) for e in described] == [({"client-id": "capped"}, {"producer_byte_rate": 50000.0})]

    assert create_topic(cluster.address(2), "capped-topic", assignment={0: [2]}).error_code == 0
    cluster.wait_for_metadata(["capped-topic"])
    throttles: list[int] = []
    delivered: list[object] = []
    producer = Producer({"bootstrap.servers": cluster.address(2), "client.id": "capped",
                         "throttle_cb": lambda event: throttles.append(event.throttle_time)})
    for _ in range(100):
        producer.produce("capped-topic", b"x" * 10_000, on_delivery=lambda err, msg: delivered.append(err))
    deadline = time.monotonic() + 60
    while (len(delivered) < 100 or not throttles) and time.monotonic() < deadline:
        producer.poll(0.2)
    assert delivered == [None] * 100
    assert throttles and max(throttles) > 0
