"""CreateTopics, DescribeConfigs, AlterConfigs, CreatePartitions and DeleteTopics through confluent-kafka's AdminClient.

Each answer, error code included, is the one a Kafka broker gives.
"""

from __future__ import annotations

import uuid
from concurrent.futures import Future

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from tests.scenarios.compat.clients import ConfluentDriver, OutgoingRecord
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_under_test import TANSU_NO_ALTER_CONFIGS, TANSU_NO_CREATE_PARTITIONS, require_spate

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(60),
    # AlterConfigs (not the incremental variant) is the API under test, deprecated client-side only.
    pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning"),
]

TIMEOUT = 15.0
TANSU_CONFIG_SOURCES = "DescribeConfigs lists only the topic's overrides, and reports them as defaults"


@pytest.fixture
def admin(broker) -> AdminClient:
    return ConfluentDriver(broker.bootstrap).admin()


@pytest.fixture
def topic(admin: AdminClient) -> str:
    name = f"admin-{uuid.uuid4().hex[:10]}"
    settle(admin.create_topics([NewTopic(name, 3, 1)], operation_timeout=TIMEOUT)[name])
    return name


def settle(future: Future) -> object:
    return future.result(timeout=TIMEOUT)


def error_of(future: Future) -> int:
    """The Kafka error code the future fails with; fails the test if it succeeds."""
    with pytest.raises(KafkaException) as failure:
        settle(future)
    return failure.value.args[0].code()


def topic_configs(admin: AdminClient, topic: str) -> dict:
    (future,) = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values()
    return settle(future)


def partition_count(admin: AdminClient, topic: str) -> int | None:
    found = admin.list_topics(timeout=TIMEOUT).topics.get(topic)
    return None if found is None else len(found.partitions)


# --- CreateTopics ---------------------------------------------------------------------------


def test_create_topic_that_exists_is_topic_already_exists(admin: AdminClient, topic: str) -> None:
    assert error_of(admin.create_topics([NewTopic(topic, 1, 1)])[topic]) == KafkaError.TOPIC_ALREADY_EXISTS


def test_create_topic_with_more_replicas_than_brokers_is_invalid_replication_factor(
    admin: AdminClient, broker_kind
) -> None:
    require_spate(broker_kind, "it accepts any replication factor on a single broker")
    name = f"admin-rf-{uuid.uuid4().hex[:8]}"

    assert error_of(admin.create_topics([NewTopic(name, 1, 2)])[name]) == KafkaError.INVALID_REPLICATION_FACTOR
    assert partition_count(admin, name) is None


def test_create_topic_with_illegal_name_is_invalid_topic(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, "it accepts topic names with characters Kafka forbids")
    name = "not a legal/name"

    assert error_of(admin.create_topics([NewTopic(name, 1, 1)])[name]) == KafkaError.TOPIC_EXCEPTION


def test_create_topic_validate_only_creates_nothing(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, "validate_only creates the topic")
    name = f"admin-dry-{uuid.uuid4().hex[:8]}"

    settle(admin.create_topics([NewTopic(name, 2, 1)], validate_only=True)[name])

    assert partition_count(admin, name) is None


# --- DescribeConfigs ------------------------------------------------------------------------


def test_describe_configs_reports_overrides_as_dynamic_topic_config(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, TANSU_CONFIG_SOURCES)
    name = f"admin-cfg-{uuid.uuid4().hex[:8]}"
    overrides = {"retention.ms": "123456", "cleanup.policy": "compact"}
    settle(admin.create_topics([NewTopic(name, 1, 1, config=overrides)])[name])

    entries = topic_configs(admin, name)

    for key, value in overrides.items():
        entry = entries[key]
        assert (entry.value, ConfigSource(entry.source), entry.is_default) == (
            value, ConfigSource.DYNAMIC_TOPIC_CONFIG, False
        )  # fmt: skip


def test_describe_configs_lists_topic_defaults_too(admin: AdminClient, topic: str, broker_kind) -> None:
    require_spate(broker_kind, TANSU_CONFIG_SOURCES)
    entries = topic_configs(admin, topic)

    for key in ("cleanup.policy", "retention.ms", "segment.bytes", "max.message.bytes"):
        assert key in entries, f"{key} missing from DescribeConfigs"
        assert ConfigSource(entries[key].source) != ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert entries["cleanup.policy"].value == "delete"


def test_describe_configs_of_unknown_topic_is_unknown_topic(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, "DescribeConfigs of an unknown topic answers without an error")
    resource = ConfigResource(ConfigResource.Type.TOPIC, f"absent-{uuid.uuid4().hex[:8]}")
    (future,) = admin.describe_configs([resource]).values()

    assert error_of(future) == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_describe_configs_of_the_broker_lists_its_settings(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, "DescribeConfigs of the broker resource returns no entries")
    (broker_id,) = admin.list_topics(timeout=TIMEOUT).brokers
    (future,) = admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, str(broker_id))]).values()

    entries = settle(future)

    assert {"num.partitions", "log.dirs", "auto.create.topics.enable"} <= entries.keys()


# --- AlterConfigs ---------------------------------------------------------------------------


def alter(admin: AdminClient, topic: str, settings: dict[str, str], **kwargs: object) -> Future:
    (future,) = admin.alter_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, topic, set_config=settings)], **kwargs
    ).values()
    return future


def test_alter_configs_replaces_the_whole_set_of_overrides(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_ALTER_CONFIGS)
    name = f"admin-alter-{uuid.uuid4().hex[:8]}"
    settle(admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": "compact"})])[name])

    settle(alter(admin, name, {"retention.ms": "5555"}))

    entries = topic_configs(admin, name)
    assert (entries["retention.ms"].value, ConfigSource(entries["retention.ms"].source)) == (
        "5555", ConfigSource.DYNAMIC_TOPIC_CONFIG
    )  # fmt: skip
    # Non-incremental AlterConfigs resets every key it does not name.
    assert entries["cleanup.policy"].value == "delete"
    assert ConfigSource(entries["cleanup.policy"].source) != ConfigSource.DYNAMIC_TOPIC_CONFIG


def test_alter_configs_validate_only_changes_nothing(admin: AdminClient, topic: str, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_ALTER_CONFIGS)
    before = topic_configs(admin, topic)["retention.ms"].value

    settle(alter(admin, topic, {"retention.ms": "7777"}, validate_only=True))

    assert topic_configs(admin, topic)["retention.ms"].value == before


@pytest.mark.parametrize("settings", [{"retention.ms": "not-a-number"}, {"no.such.topic.config": "1"}])
def test_alter_configs_with_invalid_setting_is_invalid_config(
    admin: AdminClient, topic: str, broker_kind, settings: dict[str, str]
) -> None:
    require_spate(broker_kind, TANSU_NO_ALTER_CONFIGS)
    before = topic_configs(admin, topic)["retention.ms"].value

    assert error_of(alter(admin, topic, settings)) == KafkaError.INVALID_CONFIG
    assert topic_configs(admin, topic)["retention.ms"].value == before


def test_alter_configs_of_unknown_topic_is_unknown_topic(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_ALTER_CONFIGS)

    assert (
        error_of(alter(admin, f"absent-{uuid.uuid4().hex[:8]}", {"retention.ms": "1000"}))
        == KafkaError.UNKNOWN_TOPIC_OR_PART
    )


# --- CreatePartitions -----------------------------------------------------------------------


def test_create_partitions_adds_usable_partitions(broker, admin: AdminClient, topic: str, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_CREATE_PARTITIONS)

    settle(admin.create_partitions([NewPartitions(topic, 5)], operation_timeout=TIMEOUT)[topic])

    assert partition_count(admin, topic) == 5
    client = ConfluentDriver(broker.bootstrap)
    (placement,) = client.produce(topic, [OutgoingRecord(b"k", b"in new partition", (), recent_base_ms())], partition=4)
    assert (placement.partition, placement.offset) == (4, 0)
    (record,) = client.consume(topic, {4: 0}, {4: 1})
    assert record.value == b"in new partition"


@pytest.mark.parametrize("count", [2, 3])
def test_create_partitions_not_above_current_count_is_invalid_partitions(
    admin: AdminClient, topic: str, broker_kind, count: int
) -> None:
    require_spate(broker_kind, TANSU_NO_CREATE_PARTITIONS)

    assert error_of(admin.create_partitions([NewPartitions(topic, count)])[topic]) == KafkaError.INVALID_PARTITIONS
    assert partition_count(admin, topic) == 3


def test_create_partitions_validate_only_adds_nothing(admin: AdminClient, topic: str, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_CREATE_PARTITIONS)

    settle(admin.create_partitions([NewPartitions(topic, 6)], validate_only=True)[topic])

    assert partition_count(admin, topic) == 3


def test_create_partitions_of_unknown_topic_is_unknown_topic(admin: AdminClient, broker_kind) -> None:
    require_spate(broker_kind, TANSU_NO_CREATE_PARTITIONS)
    name = f"absent-{uuid.uuid4().hex[:8]}"

    assert error_of(admin.create_partitions([NewPartitions(name, 4)])[name]) == KafkaError.UNKNOWN_TOPIC_OR_PART


# --- DeleteTopics ---------------------------------------------------------------------------


def test_delete_topic_removes_it_from_metadata(admin: AdminClient, topic: str) -> None:
    settle(admin.delete_topics([topic], operation_timeout=TIMEOUT)[topic])

    assert partition_count(admin, topic) is None


def test_delete_unknown_topic_is_unknown_topic(admin: AdminClient) -> None:
    name = f"absent-{uuid.uuid4().hex[:8]}"

    assert error_of(admin.delete_topics([name])[name]) == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_recreated_topic_starts_empty(broker, admin: AdminClient, topic: str) -> None:
    client = ConfluentDriver(broker.bootstrap)
    client.produce(topic, [OutgoingRecord(b"k", b"old", (), recent_base_ms())] * 5, partition=0)
    settle(admin.delete_topics([topic], operation_timeout=TIMEOUT)[topic])

    settle(admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=TIMEOUT)[topic])

    assert client.log_start_offset(topic, 0) == 0
    (placement,) = client.produce(topic, [OutgoingRecord(b"k", b"new", (), recent_base_ms())], partition=0)
    assert placement.offset == 0
    (record,) = client.consume(topic, {0: 0}, {0: 1})
    assert record.value == b"new"


def test_describe_topics_reports_the_authorized_operations(admin: AdminClient, topic: str, broker_kind) -> None:
    require_spate(broker_kind, "authorized operations are not reported")
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AclOperation

    (future,) = admin.describe_topics(TopicCollection([topic]), include_authorized_operations=True).values()
    described = settle(future)

    # No authorizer: every operation a topic supports.
    assert set(described.authorized_operations) == {
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
        AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}
