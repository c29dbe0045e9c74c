"""A 3-broker cluster whose brokers talk to each other over SASL_SSL (SCRAM-SHA-512 and mTLS).

Replica fetchers, the controller's channel and the transaction marker channel
all use the INTERNAL listener; clients use PLAINTEXT. A topic with
``min.insync.replicas=3`` takes ``acks=all`` writes only while both followers
fetch, so successful writes and a full ISR show that inter-broker
authentication works; a transaction shows the marker channel does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker_core.security.credentials import ZkScramCredentialStore
from broker_core.security.sasl.scram import SCRAM_SHA_512, ScramCredential
from spate.cli.certs import create_certificates
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests
from tests.support.ports import free_port
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

BROKER_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" '
               'password="broker-secret";')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    base: Path = tmp_path_factory.mktemp("secure-cluster")
    certs = create_certificates(base / "certs")
    cluster = ClusterForTests(base, zookeeper, overrides={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
        "inter.broker.listener.name": "INTERNAL",
        "ssl.keystore.location": str(certs.broker_keystore),
        "ssl.truststore.location": str(certs.ca),
        "listener.name.internal.ssl.client.auth": "required",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.internal.scram-sha-512.sasl.jaas.config": BROKER_JAAS,
        "offsets.topic.replication.factor": "3",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.min.isr": "2",
    })
    for broker in cluster.brokers.values():
        broker.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{broker.port},INTERNAL://127.0.0.1:{free_port()}"
    ZkScramCredentialStore(cluster.zk).upsert("broker", SCRAM_SHA_512,
                                              ScramCredential.from_password(SCRAM_SHA_512, "broker-secret"))
    try:
        cluster.start()
        cluster.wait_for(cluster.controller_id, "a controller to be elected")
        cluster.wait_for_metadata()
        yield cluster
    finally:
        cluster.close()


def test_replicas_follow_their_leader_over_sasl_ssl(cluster: ClusterForTests) -> None:
    from confluent_kafka import Consumer, Producer

    response = create_topic(cluster.address(1), "replicated", partitions=3, replication_factor=3,
                            configs={"min.insync.replicas": "3"})
    assert response.error_code == 0, response
    cluster.wait_for_metadata(["replicated"])
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "message.timeout.ms": 60000})
    for i in range(300):
        producer.produce("replicated", value=f"v{i}".encode(), partition=i % 3)
    assert producer.flush(90) == 0
    (topic,) = cluster.metadata(1, ["replicated"]).topics
    assert all(sorted(p.isr_nodes) == [1, 2, 3] for p in topic.partitions)
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "secure-cluster",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["replicated"])
    seen, deadline = 0, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                seen += 1
            if seen == 300:
                break
    finally:
        consumer.close()
    assert seen == 300


def test_a_transaction_commits_across_brokers(cluster: ClusterForTests) -> None:
    from confluent_kafka import Producer

    create_topic(cluster.address(1), "txn-out", partitions=3, replication_factor=3)
    cluster.wait_for_metadata(["txn-out"])
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "transactional.id": "secure-txn"})
    producer.init_transactions(60)
    producer.begin_transaction()
    for i in range(30):
        producer.produce("txn-out", value=b"t", partition=i % 3)
    producer.commit_transaction(60)
