"""ACLs against a real broker: a SASL user without ACLs is refused each operation with Kafka's error,
ACLs added with the CLI or confluent-kafka's AdminClient open exactly what they name, Deny overrides Allow,
prefixed ACLs cover their prefix, and Metadata lists only what the user may Describe.

The broker runs ``authorizer.class.name=kafka.security.authorizer.AclAuthorizer``; its PLAINTEXT listener
(``User:ANONYMOUS``) is the administrator's (a super user), alice logs in with SASL/PLAIN.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from spate.cli.main import main as spate
from tests.scenarios.security.secure_broker import ALICE, SecureBroker, secure_broker
from tests.support.broker_process import running_broker
from tests.support.broker_under_test import require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)


@pytest.fixture(scope="module")
def broker(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    require_spate(broker_kind, "the test configures Spate's authorizer")
    secure = secure_broker(tmp_path_factory.mktemp("acls"))
    secure.process.overrides.update({
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:ANONYMOUS",
    })
    with running_broker(secure.process):
        yield secure


def name(prefix: str = "acl") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def alice(broker: SecureBroker, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": broker.address("SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": ALICE[0], "sasl.password": ALICE[1], **extra}


def admin_client(broker: SecureBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.process.bootstrap})


def create_topic(broker: SecureBroker, topic: str) -> None:
    admin = admin_client(broker)  # kept alive until the answer is in
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)


def acls(broker: SecureBroker, *args: str) -> None:
    assert spate(["acls", *args, "--bootstrap-server", broker.process.bootstrap]) == 0


def produce_error(broker: SecureBroker, topic: str) -> KafkaError | None:
    """The delivery error of one record alice produces (None once delivered)."""
    outcome: list[KafkaError | None] = []
    producer = Producer(alice(broker, **{"message.timeout.ms": 10000}))
    producer.produce(topic, b"v", on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "no delivery report"
    return outcome[0]


def consume(broker: SecureBroker, topic: str, group: str) -> tuple[list[bytes], KafkaError | None]:
    """What alice reads of the topic from the start in a group, and the first error she gets (bounded: 80 polls)."""
    consumer = Consumer(alice(broker, **{"group.id": group, "auto.offset.reset": "earliest",
                                         "enable.auto.commit": False}))
    consumer.subscribe([topic])
    values: list[bytes] = []
    try:
        for _ in range(80):
            message = consumer.poll(0.25)
            if message is None:
                if values:
                    break
                continue
            if message.error() is not None:
                if message.error().code() == KafkaError._PARTITION_EOF:
                    continue
                return values, message.error()
            values.append(message.value())
    finally:
        consumer.close()
    return values, None


def error_code(exc: BaseException) -> int:
    assert isinstance(exc, KafkaException), exc
    return exc.args[0].code()


def test_a_principal_without_acls_gets_kafkas_errors_and_the_broker_stays_healthy(broker: SecureBroker) -> None:
    topic = name()
    create_topic(broker, topic)
    assert produce_error(broker, topic).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    group = name("g")
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Read", "--group", group)
    _, fetch_error = consume(broker, topic, group)
    assert fetch_error is not None and fetch_error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    admin = AdminClient(alice(broker))
    with pytest.raises(KafkaException) as created:
        admin.create_topics([NewTopic(topic + "-new", 1, 1)])[topic + "-new"].result(20)
    assert error_code(created.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with pytest.raises(KafkaException) as deleted:
        admin.delete_topics([topic])[topic].result(20)
    assert error_code(deleted.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with pytest.raises(KafkaException) as described:
        list(admin.describe_configs([ConfigResource("topic", topic)]).values())[0].result(20)
    assert error_code(described.value) == KafkaError.TOPIC_AUTHORIZATION_FAILED

    # Describe on the group finds its coordinator; committing needs Read.
    group = name("g")
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Describe", "--group", group)
    consumer = Consumer(alice(broker, **{"group.id": group}))
    try:
        with pytest.raises(KafkaException) as committed:
            consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
        assert error_code(committed.value) == KafkaError.GROUP_AUTHORIZATION_FAILED
    finally:
        consumer.close()

    producer = Producer(alice(broker, **{"transactional.id": name("txn")}))
    with pytest.raises(KafkaException) as initialised:
        producer.init_transactions(20)
    assert error_code(initialised.value) == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED

    broker.process.check_alive()
    assert topic in admin_client(broker).list_topics(timeout=10).topics


def test_acls_added_with_the_cli_allow_produce_consume_and_commit(broker: SecureBroker) -> None:
    topic, group = name(), name("g")
    create_topic(broker, topic)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", topic)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", topic)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Read", "--group", group)
    assert produce_error(broker, topic) is None
    values, error = consume(broker, topic, group)
    assert error is None and values == [b"v"]
    consumer = Consumer(alice(broker, **{"group.id": group}))
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    finally:
        consumer.close()

    acls(broker, "remove", "--allow-principal", "User:alice", "--operation", "Write", "--topic", topic)
    assert produce_error(broker, topic).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_deny_overrides_allow(broker: SecureBroker) -> None:
    topic = name()
    create_topic(broker, topic)
    acls(broker, "add", "--allow-principal", "User:*", "--operation", "All", "--topic", topic)
    acls(broker, "add", "--deny-principal", "User:alice", "--operation", "Write", "--topic", topic)
    assert produce_error(broker, topic).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    acls(broker, "remove", "--deny-principal", "User:alice", "--topic", topic)
    assert produce_error(broker, topic) is None


def test_a_prefixed_acl_covers_topics_starting_with_its_prefix(broker: SecureBroker) -> None:
    prefix = name("team") + "-"
    inside, outside = prefix + "orders", name("other")
    create_topic(broker, inside)
    create_topic(broker, outside)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", prefix,
         "--resource-pattern-type", "prefixed")
    assert produce_error(broker, inside) is None
    assert produce_error(broker, outside).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_metadata_lists_only_the_topics_the_principal_may_describe(broker: SecureBroker) -> None:
    visible, hidden = name("visible"), name("hidden")
    create_topic(broker, visible)
    create_topic(broker, hidden)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Describe", "--topic", visible)
    topics = AdminClient(alice(broker)).list_topics(timeout=10).topics
    assert visible in topics
    assert hidden not in topics


def test_confluent_admin_creates_describes_and_deletes_acls(broker: SecureBroker) -> None:
    admin, group = admin_client(broker), name("g")
    binding = AclBinding(ResourceType.GROUP, group, ResourcePatternType.LITERAL, "User:carol", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    assert admin.create_acls([binding])[binding].result(20) is None
    group_filter = AclBindingFilter(ResourceType.GROUP, group, ResourcePatternType.ANY, None, None,
                                    AclOperation.ANY, AclPermissionType.ANY)
    assert admin.describe_acls(group_filter).result(20) == [binding]
    assert admin.delete_acls([group_filter])[group_filter].result(20) == [binding]
    assert admin.describe_acls(group_filter).result(20) == []


def test_managing_acls_needs_alter_on_the_cluster(broker: SecureBroker) -> None:
    binding = AclBinding(ResourceType.TOPIC, name(), ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    admin = AdminClient(alice(broker))
    with pytest.raises(KafkaException) as refused:
        admin.create_acls([binding])[binding].result(20)
    assert error_code(refused.value) == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_raw_requests_of_a_user_without_acls_get_kafkas_codes(broker: SecureBroker) -> None:
    """bob (PLAIN through the SCRAM store) holds no ACL of his own."""
    from spate.protocol.api_keys import ApiKey
    from spate.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest as APR
    from spate.protocol.messages.describe_groups import DescribeGroupsRequest
    from spate.protocol.messages.describe_user_scram_credentials import DescribeUserScramCredentialsRequest
    from spate.protocol.messages.elect_leaders import ElectLeadersRequest
    from spate.protocol.messages.fetch import FetchRequest as F
    from spate.protocol.messages.list_groups import ListGroupsRequest
    from spate.protocol.messages.metadata import MetadataRequest
    from tests.scenarios.security.secure_broker import BOB
    from tests.scenarios.security.test_sasl_wire import Wire, plain_login

    topic = name()
    create_topic(broker, topic)
    wire = Wire(broker.address("SASL_PLAINTEXT"))
    try:
        assert plain_login(wire, f"\0{BOB[0]}\0{BOB[1]}".encode()).error_code == 0
        named = wire.call(ApiKey.METADATA, 8, MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(
            name=topic), MetadataRequest.MetadataRequestTopic(name=name("auto"))], allow_auto_topic_creation=True))
        assert [t.error_code for t in named.topics] == [29, 29]
        follower = F(replica_id=1, max_wait_ms=0, min_bytes=1, topics=[F.FetchTopic(topic=topic, partitions=[
            F.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1024)])], forgotten_topics_data=[])
        fetched = wire.call(ApiKey.FETCH, 11, follower)
        assert fetched.responses[0].partitions[0].error_code == 29, "a follower's fetch needs ClusterAction"
        groups = wire.call(ApiKey.DESCRIBE_GROUPS, 1, DescribeGroupsRequest(groups=["someone-elses"]))
        assert groups.groups[0].error_code == 30
        assert wire.call(ApiKey.LIST_GROUPS, 1, ListGroupsRequest()).groups == []
        elected = wire.call(ApiKey.ELECT_LEADERS, 1, ElectLeadersRequest(topic_partitions=None))
        assert elected.error_code == 31
        users = wire.call(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, DescribeUserScramCredentialsRequest(users=None))
        assert users.error_code == 31
        verify = APR(transactions=[APR.AddPartitionsToTxnTransaction(
            transactional_id="t", producer_id=1, producer_epoch=0, verify_only=True,
            topics=[APR.AddPartitionsToTxnTransactionTopic(name=topic, partitions=[0])])])
        verified = wire.call(ApiKey.ADD_PARTITIONS_TO_TXN, 5, verify)
        assert verified.error_code == 31, "a broker's AddPartitionsToTxn needs ClusterAction"
    finally:
        wire.close()
    broker.process.check_alive()


def test_a_transaction_runs_once_its_id_and_topic_are_allowed(broker: SecureBroker) -> None:
    topic, transactional_id = name(), name("txn")
    create_topic(broker, topic)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--transactional-id",
         transactional_id)
    acls(broker, "add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", topic)
    producer = Producer(alice(broker, **{"transactional.id": transactional_id}))
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"in-txn")
    producer.commit_transaction(30)

    refused = name()
    create_topic(broker, refused)
    reports: list[KafkaError | None] = []
    producer.begin_transaction()
    producer.produce(refused, b"nope", on_delivery=lambda err, _msg: reports.append(err))
    with pytest.raises(KafkaException):
        producer.commit_transaction(30)
    producer.poll(0)
    assert [r.code() for r in reports if r is not None] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    broker.process.check_alive()


def test_spate_acls_list_and_the_python_admin_show_the_acls(broker: SecureBroker,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from spate.client.admin.acl_admin import AclBinding as SpateAcl
    from spate.client.admin.acl_admin import AclBindingFilter as SpateFilter
    from spate.client.admin.admin import Admin

    topic = name("listed")
    acls(broker, "add", "--allow-principal", "User:dave", "--allow-host", "10.1.2.3", "--operation", "Read",
         "--operation", "Describe", "--topic", topic)
    capsys.readouterr()
    assert spate(["acls", "list", "--topic", topic, "--output", "json",
                  "--bootstrap-server", broker.process.bootstrap]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(entry["operation"] for entry in listed) == ["Describe", "Read"]
    assert {(e["principal"], e["host"], e["permission"], e["pattern_type"]) for e in listed} == {
        ("User:dave", "10.1.2.3", "Allow", "LITERAL")}

    with Admin(broker.process.bootstrap) as admin:
        prefixed = SpateAcl("Group", "dave-", "User:dave", "Read", pattern_type="PREFIXED")
        admin.create_acls([prefixed])
        assert admin.describe_acls(SpateFilter("Group", "dave-x", "MATCH")) == [prefixed]
        removed = admin.delete_acls([SpateFilter(principal="User:dave")])
        assert len(removed) == 3
        assert admin.describe_acls(SpateFilter(principal="User:dave")) == []
