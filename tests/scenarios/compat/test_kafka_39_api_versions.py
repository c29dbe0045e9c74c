"""The API versions Kafka 3.9 serves, against a real broker process.

Requests are sent raw at the new versions so each test sees exactly what the
broker wrote; the clients' own use of these versions is covered by the rest
of the compat suite (confluent-kafka, kafka-python and aiokafka pick the
highest version both sides know).
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.delete_topics import DeleteTopicsRequest
from spate.protocol.messages.describe_configs import DescribeConfigsRequest
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.find_coordinator import KEY_TYPE_GROUP, FindCoordinatorRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch
from tests.support.broker_under_test import require_spate
from tests.support.controller_requests import call

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.fixture(autouse=True)
def _spate_only(broker_kind: str) -> None:
    require_spate(broker_kind, "the Kafka 3.9 version table is Spate's")


def _topic_with_records(broker, name: str, timestamps: list[int]) -> uuid.UUID:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i, ts in enumerate(timestamps):
        producer.produce(name, value=f"v{i}".encode(), partition=0, timestamp=ts)
    assert producer.flush(20) == 0
    body = call(broker.bootstrap, ApiKey.METADATA, 12,
                MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                                allow_auto_topic_creation=False))
    return body.topics[0].topic_id


def test_metadata_v12_names_topic_ids_and_answers_a_topic_asked_for_by_id(broker, topic_name) -> None:
    name = topic_name()
    topic_id = _topic_with_records(broker, name, [1000])
    assert topic_id != uuid.UUID(int=0)
    unknown = uuid.uuid4()
    Q = MetadataRequest
    body = call(broker.bootstrap, ApiKey.METADATA, 12, Q(topics=[Q.MetadataRequestTopic(topic_id=topic_id, name=None),
                                                                Q.MetadataRequestTopic(topic_id=unknown, name=None)]))
    by_id = {t.topic_id: t for t in body.topics}
    assert by_id[topic_id].name == name and by_id[topic_id].error_code == ErrorCode.NONE
    assert len(by_id[topic_id].partitions) == 1
    assert (by_id[unknown].name, by_id[unknown].error_code) == (None, ErrorCode.UNKNOWN_TOPIC_ID)


def _fetch(broker, topic_id: uuid.UUID, version: int, *, offset: int = 0, last_fetched_epoch: int = -1):
    Q = FetchRequest
    partition = Q.FetchPartition(partition=0, fetch_offset=offset, last_fetched_epoch=last_fetched_epoch,
                                 partition_max_bytes=1 << 20)
    body = Q(max_wait_ms=0, min_bytes=1, topics=[Q.FetchTopic(topic_id=topic_id, partitions=[partition])])
    return call(broker.bootstrap, ApiKey.FETCH, version, body)


@pytest.mark.parametrize("version", [13, 15, 16, 17])
def test_fetch_by_topic_id_returns_the_records(broker, topic_name, version: int) -> None:
    topic_id = _topic_with_records(broker, topic_name(), [1000, 2000])
    response = _fetch(broker, topic_id, version)
    data = response.responses[0].partitions[0]
    assert response.responses[0].topic_id == topic_id
    assert (data.error_code, data.high_watermark) == (ErrorCode.NONE, 2)
    assert len(bytes(data.records)) > 0


def test_fetch_by_an_unknown_topic_id_answers_unknown_topic_id(broker) -> None:
    data = _fetch(broker, uuid.uuid4(), 16).responses[0].partitions[0]
    assert data.error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_fetch_reports_a_diverging_epoch_for_an_epoch_the_leader_never_had(broker, topic_name) -> None:
    topic_id = _topic_with_records(broker, topic_name(), [1000, 2000])
    agreeing = _fetch(broker, topic_id, 16, offset=2, last_fetched_epoch=0).responses[0].partitions[0]
    assert agreeing.diverging_epoch.epoch == -1 and agreeing.error_code == ErrorCode.NONE
    diverged = _fetch(broker, topic_id, 16, offset=2, last_fetched_epoch=7).responses[0].partitions[0]
    assert (diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (-1, -1)
    assert bytes(diverged.records or b"") == b""


def _list_offset(broker, name: str, timestamp: int) -> tuple[int, int]:
    Q = ListOffsetsRequest
    body = Q(topics=[Q.ListOffsetsTopic(name=name, partitions=[Q.ListOffsetsPartition(partition_index=0,
                                                                                       timestamp=timestamp)])])
    found = call(broker.bootstrap, ApiKey.LIST_OFFSETS, 9, body).topics[0].partitions[0]
    assert found.error_code == ErrorCode.NONE
    return found.timestamp, found.offset


def test_list_offsets_v9_finds_the_max_timestamp_and_the_local_and_tiered_ends(broker, topic_name) -> None:
    name = topic_name()
    _topic_with_records(broker, name, [1000, 5000, 3000])
    assert _list_offset(broker, name, -3) == (5000, 1)  # KIP-734: the record with the largest timestamp
    assert _list_offset(broker, name, -4)[1] == 0  # earliest local: the log start without tiered storage
    assert _list_offset(broker, name, -5)[1] == -1  # latest tiered: nothing is tiered


def _commit(broker, group: str, topic: str, offset: int) -> None:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def test_offset_fetch_v8_answers_several_groups_in_one_request(broker, topic_name) -> None:
    name = topic_name()
    _topic_with_records(broker, name, [1000])
    _commit(broker, f"{name}-a", name, 1)
    Q = OffsetFetchRequest
    wanted = [Q.OffsetFetchRequestTopics(name=name, partition_indexes=[0])]
    body = Q(groups=[Q.OffsetFetchRequestGroup(group_id=f"{name}-a", topics=wanted),
                     Q.OffsetFetchRequestGroup(group_id=f"{name}-b", topics=wanted),
                     Q.OffsetFetchRequestGroup(group_id=f"{name}-a", topics=None)], require_stable=True)
    deadline = time.monotonic() + 20
    while True:  # the coordinator may still be loading the offsets partition
        groups = call(broker.bootstrap, ApiKey.OFFSET_FETCH, 8, body).groups
        if all(g.error_code == ErrorCode.NONE for g in groups) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    offsets = [[(t.name, p.partition_index, p.committed_offset) for t in g.topics for p in t.partitions]
               for g in groups]
    assert offsets == [[(name, 0, 1)], [(name, 0, -1)], [(name, 0, 1)]]
    assert [g.group_id for g in groups] == [f"{name}-a", f"{name}-b", f"{name}-a"]


def test_find_coordinator_v4_answers_each_key(broker, topic_name) -> None:
    keys = [topic_name(), topic_name()]
    body = FindCoordinatorRequest(key_type=KEY_TYPE_GROUP, coordinator_keys=keys)
    deadline = time.monotonic() + 20
    while True:
        coordinators = call(broker.bootstrap, ApiKey.FIND_COORDINATOR, 4, body).coordinators
        if all(c.error_code == ErrorCode.NONE for c in coordinators) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    assert [(c.key, c.error_code, c.port) for c in coordinators] == [(k, ErrorCode.NONE, port) for k in keys]


def test_describe_configs_v4_gives_types_and_documentation(broker, topic_name) -> None:
    name = topic_name()
    _topic_with_records(broker, name, [1000])
    Q = DescribeConfigsRequest
    body = Q(resources=[Q.DescribeConfigsResource(resource_type=2, resource_name=name,
                                                   configuration_keys=["retention.ms", "cleanup.policy"])],
             include_documentation=True)
    configs = {c.name: c for c in call(broker.bootstrap, ApiKey.DESCRIBE_CONFIGS, 4, body).results[0].configs}
    assert (configs["retention.ms"].config_type, configs["cleanup.policy"].config_type) == (5, 7)  # LONG, LIST
    assert configs["retention.ms"].documentation


def test_produce_v11_appends_and_answers_in_the_flexible_format(broker, topic_name) -> None:
    name = topic_name()
    topic_id = _topic_with_records(broker, name, [1000])
    Q = ProduceRequest
    batch = build_batch([Record(0, 2000, None, b"flexible")])
    body = Q(acks=1, timeout_ms=5000, topic_data=[
        Q.TopicProduceData(name=name, partition_data=[Q.PartitionProduceData(index=0, records=batch)])
    ])
    result = call(broker.bootstrap, ApiKey.PRODUCE, 11, body).responses[0].partition_responses[0]
    assert (result.error_code, result.base_offset) == (ErrorCode.NONE, 1)
    data = _fetch(broker, topic_id, 17).responses[0].partitions[0]
    assert data.high_watermark == 2


def test_alter_configs_of_the_deprecated_message_format_version_is_accepted(broker, topic_name) -> None:
    """What librdkafka's test 0092 does before producing with several message versions."""
    name = topic_name()
    _topic_with_records(broker, name, [1000])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource("topic", name,
                              set_config={"message.format.version": "0.10.0.0", "retention.ms": "3600000"})
    admin.alter_configs([resource])[resource].result(timeout=20)
    described = admin.describe_configs([ConfigResource("topic", name)])
    configs = next(iter(described.values())).result(timeout=20)
    assert configs["retention.ms"].value == "3600000"
    assert "message.format.version" not in configs


def test_create_topics_v7_answers_the_topic_id_partitions_replication_and_configs(broker, topic_name) -> None:
    name = topic_name()
    Q = CreateTopicsRequest
    body = Q(topics=[Q.CreatableTopic(name=name, num_partitions=3, replication_factor=1,
                                      configs=[Q.CreatableTopicConfig(name="retention.ms", value="60000")])],
             timeout_ms=20000)
    created = call(broker.bootstrap, ApiKey.CREATE_TOPICS, 7, body).topics[0]
    assert (created.error_code, created.num_partitions, created.replication_factor) == (ErrorCode.NONE, 3, 1)
    configs = {c.name: (c.value, c.config_source) for c in created.configs}
    assert configs["retention.ms"] == ("60000", 1)  # DYNAMIC_TOPIC_CONFIG
    assert configs["cleanup.policy"][1] == 5  # DEFAULT_CONFIG
    metadata = call(broker.bootstrap, ApiKey.METADATA, 12,
                    MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name)]))
    assert created.topic_id == metadata.topics[0].topic_id != uuid.UUID(int=0)


def test_delete_topics_v6_deletes_a_topic_named_by_id(broker, topic_name) -> None:
    name = topic_name()
    topic_id = _topic_with_records(broker, name, [1000])
    unknown = uuid.uuid4()
    Q = DeleteTopicsRequest
    body = Q(topics=[Q.DeleteTopicState(name=None, topic_id=topic_id),
                     Q.DeleteTopicState(name=None, topic_id=unknown)], timeout_ms=20000)
    results = {r.topic_id: r for r in call(broker.bootstrap, ApiKey.DELETE_TOPICS, 6, body).responses}
    assert (results[topic_id].name, results[topic_id].error_code) == (name, ErrorCode.NONE)
    assert (results[unknown].name, results[unknown].error_code) == (None, ErrorCode.UNKNOWN_TOPIC_ID)


def _init_producer_id(broker, version: int, txn_id: str, producer_id: int = -1, epoch: int = -1):
    body = InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=60000, producer_id=producer_id,
                                 producer_epoch=epoch)
    deadline = time.monotonic() + 20
    while True:  # the transaction coordinator may still be loading its partition
        answer = call(broker.bootstrap, ApiKey.INIT_PRODUCER_ID, version, body)
        if answer.error_code not in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR,
                                     ErrorCode.CONCURRENT_TRANSACTIONS) or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def test_init_producer_id_v5_bumps_the_epoch_of_the_holder_and_fences_a_stale_one(broker, topic_name) -> None:
    txn_id = topic_name("txn")
    first = _init_producer_id(broker, 5, txn_id)
    assert (first.error_code, first.producer_epoch) == (ErrorCode.NONE, 0)
    bumped = _init_producer_id(broker, 5, txn_id, first.producer_id, 0)
    assert (bumped.error_code, bumped.producer_id, bumped.producer_epoch) == (ErrorCode.NONE, first.producer_id, 1)
    # The same request again, as after a lost answer: the current epoch, not another bump.
    retried = _init_producer_id(broker, 5, txn_id, first.producer_id, 0)
    assert (retried.error_code, retried.producer_epoch) == (ErrorCode.NONE, 1)
    bumped_again = _init_producer_id(broker, 5, txn_id, first.producer_id, 1)
    assert bumped_again.producer_epoch == 2
    assert _init_producer_id(broker, 5, txn_id, first.producer_id, 0).error_code == ErrorCode.PRODUCER_FENCED
    assert _init_producer_id(broker, 3, txn_id, first.producer_id, 0).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert _init_producer_id(broker, 5, txn_id, first.producer_id + 1, 2).error_code == ErrorCode.PRODUCER_FENCED


def test_init_producer_id_v5_needs_both_the_id_and_the_epoch(broker, topic_name) -> None:
    assert _init_producer_id(broker, 5, topic_name("txn"), 7, -1).error_code == ErrorCode.INVALID_REQUEST


def test_keyless_records_for_a_compacted_topic_fail_one_by_one(broker, topic_name) -> None:
    """Produce v8+ record errors: librdkafka fails the keyless records with INVALID_RECORD, the rest retriably."""
    name = topic_name()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": "compact"})])[name].result(timeout=20)
    outcomes: list[int] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 100, "retries": 0})
    for i in range(10):
        producer.produce(name, key=None if i % 5 == 0 else f"k{i}".encode(), value=b"v", partition=0,
                         on_delivery=lambda err, _msg: outcomes.append(err.code() if err else 0))
    assert producer.flush(20) == 0
    assert outcomes.count(KafkaError.INVALID_RECORD) == 2
    assert outcomes.count(0) == 0  # the batch is refused as a whole
