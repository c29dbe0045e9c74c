"""Group administration through real admin clients: list, describe, delete groups, alter and delete offsets."""

from __future__ import annotations

import pytest
from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import GroupSubscribedToTopicError, NoError

from tests.scenarios.groups.members import (
    ConfluentMember,
    close_all,
    covered,
    spread,
    start_all,
    wait_until,
)
from tests.scenarios.groups.scenarios import SETTLE_S
from tests.scenarios.groups.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def committed_offsets(admin: AdminClient, group: str) -> dict[tuple[str, int], int]:
    request = [ConsumerGroupTopicPartitions(group)]
    result = admin.list_consumer_group_offsets(request)[group].result(30)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}


def test_an_active_group_is_listed_described_protected_from_deletion_and_deletable_once_empty(broker, unique):
    topic, other, group = unique("topic"), unique("other"), unique("group")
    create_topic(broker.bootstrap, topic, 3)
    create_topic(broker.bootstrap, other, 1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    members = start_all([ConfluentMember(broker.bootstrap, group, topic) for _ in range(2)])
    try:
        wait_until(lambda: covered(members, 3) and spread(members) == [1, 2], SETTLE_S, "two members on three partitions")
        listed = {g.group_id: g for g in admin.list_consumer_groups().result(30).valid}
        assert listed[group].is_simple_consumer_group is False  # it has a protocol type

        described = admin.describe_consumer_groups([group])[group].result(30)
        assert described.state == ConsumerGroupState.STABLE
        assert described.partition_assignor == "range"
        assert {m.host for m in described.members} == {"/127.0.0.1"}
        assigned = sorted(tp.partition for m in described.members for tp in m.assignment.topic_partitions)
        assert assigned == [0, 1, 2]

        with pytest.raises(KafkaException) as refused:
            admin.delete_consumer_groups([group])[group].result(30)
        assert refused.value.args[0].name() == "NON_EMPTY_GROUP"
    finally:
        close_all(members)

    wait_until(lambda: admin.describe_consumer_groups([group])[group].result(30).state == ConsumerGroupState.EMPTY,
               SETTLE_S, "the group to be empty")
    admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 5), TopicPartition(other, 0, 9)])]
    )[group].result(30)
    assert committed_offsets(admin, group) == {(topic, 0): 5, (other, 0): 9}

    admin.delete_consumer_groups([group])[group].result(30)
    assert group not in {g.group_id for g in admin.list_consumer_groups().result(30).valid}
    assert all(offset < 0 for offset in committed_offsets(admin, group).values())


def test_offsets_of_a_topic_the_group_consumes_cannot_be_deleted_but_others_can(broker, unique):
    topic, other, group = unique("topic"), unique("other"), unique("group")
    create_topic(broker.bootstrap, topic, 2)
    create_topic(broker.bootstrap, other, 1)
    member = ConfluentMember(broker.bootstrap, group, topic).start()
    kafka_admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        wait_until(lambda: member.assignment() == {0, 1}, SETTLE_S, "the member to own both partitions")
        outcome = kafka_admin.delete_group_offsets(group, [KafkaTopicPartition(topic, 0)])
        assert outcome[KafkaTopicPartition(topic, 0)] is GroupSubscribedToTopicError
    finally:
        member.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1), TopicPartition(other, 0, 4)])]
    )[group].result(30)
    try:
        outcome = kafka_admin.delete_group_offsets(group, [KafkaTopicPartition(other, 0)])
        assert outcome[KafkaTopicPartition(other, 0)] is NoError
        assert committed_offsets(admin, group) == {(topic, 0): 1}
    finally:
        kafka_admin.close()
