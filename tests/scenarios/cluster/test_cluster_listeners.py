"""A cluster whose brokers talk to each other on another listener than their clients use.

Each broker listens on ``CLIENT`` and on ``REPLICATION``
(``inter.broker.listener.name``), the latter advertised as a proxy in front
of it. Clients bootstrapped on CLIENT are told only CLIENT endpoints and
produce and consume as usual; brokers asked on REPLICATION name the
REPLICATION endpoints; the controller reaches every broker through its
REPLICATION proxy.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.metadata import MetadataRequest
from tests.support.admin_requests import describe_cluster, find_group_coordinator
from tests.support.controller_requests import call
from tests.support.faults import FaultCluster, broker_name, running_fault_cluster
from tests.support.zookeeper import ZooKeeperForTests

PARTITIONS = 6
RECORDS = 300
SETTLE_S = 60.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[FaultCluster]:
    with running_fault_cluster(tmp_path_factory.mktemp("listeners"), zookeeper, brokers=3,
                               overrides={"offsets.topic.num.partitions": "3",
                                          "transaction.state.log.num.partitions": "3"}) as running:
        running.wait_for(running.controller_id, "a controller to be elected")
        running.wait_for_metadata()
        yield running


def client_endpoints(cluster: FaultCluster) -> dict[int, tuple[str, int]]:
    return {i: ("127.0.0.1", cluster.broker(i).port) for i in cluster.brokers}


def replication_endpoints(cluster: FaultCluster) -> dict[int, tuple[str, int]]:
    return {i: ("127.0.0.1", cluster.replication_proxies[i].port) for i in cluster.brokers}


def metadata_brokers(address: str) -> dict[int, tuple[str, int]]:
    answer = call(address, ApiKey.METADATA, 8, MetadataRequest(topics=None, allow_auto_topic_creation=False))
    return {b.node_id: (b.host, b.port) for b in answer.brokers}


def test_each_registration_lists_the_client_and_the_replication_endpoint(cluster: FaultCluster) -> None:
    for broker_id in cluster.brokers:
        data, _ = cluster.zk.get(f"/brokers/ids/{broker_id}")
        registration = json.loads(data)
        assert registration["endpoints"] == [
            f"CLIENT://127.0.0.1:{cluster.broker(broker_id).port}",
            f"REPLICATION://127.0.0.1:{cluster.replication_proxies[broker_id].port}",
        ]
        assert registration["listener_security_protocol_map"] == {"CLIENT": "PLAINTEXT", "REPLICATION": "PLAINTEXT"}


def test_every_broker_answers_with_the_endpoints_of_the_listener_asked(cluster: FaultCluster) -> None:
    for broker_id in cluster.brokers:
        assert metadata_brokers(cluster.address(broker_id)) == client_endpoints(cluster)
        through_replication = f"127.0.0.1:{cluster.replication_proxies[broker_id].port}"
        assert metadata_brokers(through_replication) == replication_endpoints(cluster)
        described = describe_cluster(cluster.address(broker_id))
        assert {b.broker_id: (b.host, b.port) for b in described.brokers} == client_endpoints(cluster)


def test_the_controller_reaches_every_broker_through_its_replication_listener(cluster: FaultCluster) -> None:
    controller = cluster.controller_id()
    for broker_id, proxy in cluster.replication_proxies.items():
        assert proxy.accepted_from[broker_name(controller)] > 0, (
            f"the controller (broker {controller}) never connected to broker {broker_id}'s replication listener: "
            f"{dict(proxy.accepted_from)}"
        )


def test_clients_on_the_client_listener_produce_consume_and_find_their_coordinator(cluster: FaultCluster,
                                                                                   topic_name) -> None:
    topic = topic_name()
    cluster.create_topic(topic, partitions=PARTITIONS, replication_factor=1)
    leaders = Counter(cluster.leader_of(topic, p) for p in range(PARTITIONS))
    assert set(leaders) == set(cluster.brokers), f"partitions are not spread over every broker: {leaders}"
    producer = Producer({"bootstrap.servers": cluster.address(1), "enable.idempotence": True, "acks": "all"})
    for i in range(RECORDS):
        producer.produce(topic, key=str(i).encode(), value=b"v-%d" % i)
    assert producer.flush(30) == 0
    group = f"listeners-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": cluster.address(2), "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + SETTLE_S
    try:
        while len(values) < RECORDS and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(values) == sorted(b"v-%d" % i for i in range(RECORDS))
    coordinator = find_group_coordinator(cluster.address(3), group)
    assert (coordinator.host, coordinator.port) == client_endpoints(cluster)[coordinator.node_id]
