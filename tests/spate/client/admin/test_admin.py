"""Admin operations and the Kafka error codes they report."""

from __future__ import annotations

import pytest

from spate.client import (
    Admin,
    AdminError,
    ConfigResource,
    ConfigSource,
    ErrorCode,
    NewTopic,
)
from tests.spate.client.conftest import (
    CLIENT_TIMEOUT_MS,
    TANSU_NO_ALTER_CONFIGS,
    TANSU_NO_CREATE_PARTITIONS,
    TANSU_TOPIC_CONFIGS_IGNORED,
    create_topic,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def admin(broker):
    with Admin(broker.bootstrap, default_api_timeout_ms=CLIENT_TIMEOUT_MS) as client:
        yield client


def test_created_topics_are_listed_and_described_with_their_partitions(broker, admin, topic_name) -> None:
    names = [topic_name("a"), topic_name("b")]
    admin.create_topics([NewTopic(names[0], 3, 1), NewTopic(names[1], 1, 1)])
    assert set(names) <= set(admin.list_topics())
    described = admin.describe_topics(names)
    assert [len(described[n].partitions) for n in names] == [3, 1]
    for partition in described[names[0]].partitions:
        assert partition.leader >= 0
        assert partition.replicas == (partition.leader,) and partition.isr == (partition.leader,)


def test_creating_an_existing_topic_reports_topic_already_exists(admin, topic_name) -> None:
    name = topic_name()
    admin.create_topics(NewTopic(name, 1, 1))
    with pytest.raises(AdminError) as raised:
        admin.create_topics([NewTopic(name, 1, 1)])
    assert raised.value.code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert set(raised.value.errors) == {name}


def test_one_failing_topic_does_not_stop_the_others(admin, topic_name) -> None:
    existing, fresh = topic_name("old"), topic_name("new")
    admin.create_topics(NewTopic(existing, 1, 1))
    with pytest.raises(AdminError) as raised:
        admin.create_topics([NewTopic(existing, 1, 1), NewTopic(fresh, 2, 1)])
    assert set(raised.value.errors) == {existing}
    assert len(admin.describe_topics([fresh])[fresh].partitions) == 2


def test_deleted_topics_disappear_and_deleting_again_reports_unknown_topic(admin, topic_name) -> None:
    name = topic_name()
    admin.create_topics(NewTopic(name, 1, 1))
    admin.delete_topics([name])
    assert name not in admin.list_topics()
    with pytest.raises(AdminError) as raised:
        admin.delete_topics(name)
    assert raised.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_describing_an_unknown_topic_reports_unknown_topic(admin, topic_name) -> None:
    with pytest.raises(AdminError) as raised:
        admin.describe_topics([topic_name()])
    assert raised.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_grows_a_topic_and_refuses_to_shrink_it(broker, admin, topic_name) -> None:
    broker.skip_on_tansu(TANSU_NO_CREATE_PARTITIONS)
    name = create_topic(broker.bootstrap, topic_name(), 2)
    admin.create_partitions({name: 5})
    assert len(admin.describe_topics([name])[name].partitions) == 5
    with pytest.raises(AdminError) as raised:
        admin.create_partitions({name: 3})
    assert raised.value.code == ErrorCode.INVALID_PARTITIONS


def test_create_partitions_of_an_unknown_topic_reports_unknown_topic(broker, admin, topic_name) -> None:
    broker.skip_on_tansu(TANSU_NO_CREATE_PARTITIONS)
    with pytest.raises(AdminError) as raised:
        admin.create_partitions({topic_name(): 3})
    assert raised.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_topic_configs_given_at_creation_are_described_as_topic_overrides(broker, admin, topic_name) -> None:
    name = topic_name()
    admin.create_topics(NewTopic(name, 1, 1, configs={"retention.ms": "3600000"}))
    resource = ConfigResource.topic(name)
    entry = admin.describe_configs(resource)[resource]["retention.ms"]
    assert entry.value == "3600000"
    if not broker.is_tansu:  # Tansu reports every source as the default
        assert entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG


def test_an_invalid_topic_config_at_creation_reports_invalid_config(broker, admin, topic_name) -> None:
    broker.skip_on_tansu(TANSU_TOPIC_CONFIGS_IGNORED)
    with pytest.raises(AdminError) as raised:
        admin.create_topics(NewTopic(topic_name(), 1, 1, configs={"retention.ms": "soon"}))
    assert raised.value.code == ErrorCode.INVALID_CONFIG


def test_alter_configs_replaces_overrides_and_validates_values(broker, admin, topic_name) -> None:
    broker.skip_on_tansu(TANSU_NO_ALTER_CONFIGS)
    name = topic_name()
    admin.create_topics(NewTopic(name, 1, 1, configs={"retention.ms": "3600000"}))
    resource = ConfigResource.topic(name)
    admin.alter_configs({resource: {"cleanup.policy": "compact"}})
    configs = admin.describe_configs(resource)[resource]
    assert configs["cleanup.policy"].value == "compact"
    assert configs["retention.ms"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG, "AlterConfigs replaces the whole set"
    with pytest.raises(AdminError) as raised:
        admin.alter_configs({resource: {"retention.ms": "soon"}})
    assert raised.value.code == ErrorCode.INVALID_CONFIG


def test_broker_configs_are_described_by_broker_id(broker, admin) -> None:
    broker.skip_on_tansu("DescribeConfigs for a broker answers no entries")
    node = admin.describe_cluster().brokers[0].node_id
    resource = ConfigResource.broker(node)
    configs = admin.describe_configs([resource])[resource]
    assert "log.dirs" in configs


def test_configs_of_a_broker_not_in_the_cluster_fail_at_once(admin) -> None:
    resource = ConfigResource.broker(987654)
    with pytest.raises(AdminError) as raised:
        admin.describe_configs([resource], timeout_ms=5000)
    assert resource in raised.value.errors


def test_describe_cluster_names_the_brokers_and_the_controller(broker, admin) -> None:
    cluster = admin.describe_cluster()
    assert len(cluster.brokers) == 1
    assert cluster.controller is not None and cluster.controller.port == broker.process.port
    assert cluster.cluster_id
