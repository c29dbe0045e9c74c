"""ACLs in a 3-broker cluster: stored in ZooKeeper as Kafka stores them, followed by every broker, enforced
everywhere, while the brokers replicate to each other as the super user ``User:broker``.

Brokers talk to each other over INTERNAL (SASL_PLAINTEXT, SCRAM-SHA-512 as ``broker``), the administrator
uses PLAINTEXT (``User:ANONYMOUS``, a super user too) and alice CLIENT (SASL_PLAINTEXT, PLAIN).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker_core.security.credentials import ZkScramCredentialStore
from broker_core.security.sasl.scram import SCRAM_SHA_512, ScramCredential
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.acls import DescribeAclsRequest
from tests.support.admin_requests import create_topic
from tests.support.cluster import ClusterForTests
from tests.support.controller_requests import call
from tests.support.ports import free_port
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

BROKER_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" '
               'password="broker-secret";')
ALICE_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    base: Path = tmp_path_factory.mktemp("acl-cluster")
    cluster = ClusterForTests(base, zookeeper, overrides={
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CLIENT:SASL_PLAINTEXT",
        "inter.broker.listener.name": "INTERNAL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        "listener.name.internal.scram-sha-512.sasl.jaas.config": BROKER_JAAS,
        "listener.name.client.plain.sasl.jaas.config": ALICE_JAAS,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:broker;User:ANONYMOUS",
        "offsets.topic.replication.factor": "3",
    })
    client_ports = {}
    for broker_id, broker in cluster.brokers.items():
        client_ports[broker_id] = free_port()
        broker.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{broker.port},INTERNAL://127.0.0.1:{free_port()},"
                                         f"CLIENT://127.0.0.1:{client_ports[broker_id]}")
    cluster.client_ports = client_ports  # type: ignore[attr-defined]
    ZkScramCredentialStore(cluster.zk).upsert("broker", SCRAM_SHA_512,
                                              ScramCredential.from_password(SCRAM_SHA_512, "broker-secret"))
    try:
        cluster.start()
        cluster.wait_for(cluster.controller_id, "a controller to be elected")
        cluster.wait_for_metadata()
        yield cluster
    finally:
        cluster.close()


def described(address: str, topic: str) -> list[tuple[str, int]]:
    """(principal, operation) of each ACL one broker holds on the literal topic."""
    body = DescribeAclsRequest(resource_type_filter=2, resource_name_filter=topic, pattern_type_filter=3,
                               principal_filter=None, host_filter=None, operation=1, permission_type=1)
    response = call(address, ApiKey.DESCRIBE_ACLS, 1, body)
    assert response.error_code == 0, response
    return [(acl.principal, acl.operation) for resource in response.resources for acl in resource.acls]


def alice_produces(cluster: ClusterForTests, broker_id: int, topic: str) -> int:
    """The error code of alice's acks=all produce through one broker's CLIENT listener (0: written)."""
    from confluent_kafka import Producer

    outcome: list = []
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{cluster.client_ports[broker_id]}",  # type: ignore
                         "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                         "sasl.username": "alice", "sasl.password": "alice-secret", "acks": "all",
                         "message.timeout.ms": 30000})
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(40)
    assert outcome, "no delivery report"
    return 0 if outcome[0] is None else outcome[0].code()


def test_acls_created_on_one_broker_take_effect_on_every_broker(cluster: ClusterForTests) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType
    from confluent_kafka.admin import ResourceType as RT

    topic = "acl-replicated"
    assert create_topic(cluster.address(1), topic, partitions=3, replication_factor=3).error_code == 0
    cluster.wait_for_metadata([topic])
    for broker_id in cluster.brokers:
        assert alice_produces(cluster, broker_id, topic) == KafkaError.TOPIC_AUTHORIZATION_FAILED

    admin = AdminClient({"bootstrap.servers": cluster.address(1)})
    binding = AclBinding(RT.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*", AclOperation.WRITE,
                         AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(30)

    data, _ = cluster.zk.get(f"/kafka-acl/Topic/{topic}")
    assert json.loads(data) == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Write", "host": "*"}]}
    assert cluster.zk.get_children("/kafka-acl-changes")

    deadline = time.monotonic() + 30
    while any(described(cluster.address(b), topic) != [("User:alice", 4)] for b in cluster.brokers):
        assert time.monotonic() < deadline, "the ACL did not reach every broker"
        time.sleep(0.2)
    for broker_id in cluster.brokers:
        assert alice_produces(cluster, broker_id, topic) == 0
    (metadata,) = cluster.metadata(1, [topic]).topics
    assert all(sorted(p.isr_nodes) == [1, 2, 3] for p in metadata.partitions), "replication as User:broker"


def test_prefixed_acls_are_stored_under_kafka_acl_extended(cluster: ClusterForTests) -> None:
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, AdminClient, ResourcePatternType
    from confluent_kafka.admin import ResourceType as RT

    admin = AdminClient({"bootstrap.servers": cluster.address(2)})
    binding = AclBinding(RT.GROUP, "team-", ResourcePatternType.PREFIXED, "User:alice", "*", AclOperation.READ,
                         AclPermissionType.ALLOW)
    admin.create_acls([binding])[binding].result(30)
    data, _ = cluster.zk.get("/kafka-acl-extended/prefixed/Group/team-")
    assert json.loads(data)["acls"][0]["operation"] == "Read"
    assert cluster.zk.get_children("/kafka-acl-extended-changes")
