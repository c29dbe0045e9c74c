"""Groups mixing client libraries on a common assignor, and cooperative (incremental) rebalancing."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient

from tests.scenarios.groups.members import (
    AiokafkaMember,
    ConfluentMember,
    KafkaPythonMember,
    close_all,
    covered,
    spread,
    start_all,
    wait_until,
)
from tests.scenarios.groups.scenarios import PARTITIONS, SETTLE_S
from tests.scenarios.groups.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_confluent_kafka_python_and_aiokafka_members_share_a_roundrobin_group(broker, unique):
    topic, group = unique("topic"), unique("group")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    kinds = [ConfluentMember, KafkaPythonMember, ConfluentMember, KafkaPythonMember, AiokafkaMember]
    members = start_all([kind(broker.bootstrap, group, topic, assignor="roundrobin") for kind in kinds])
    try:
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [1, 1, 1, 1, 2], SETTLE_S,
                   "five members of three libraries sharing six partitions")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        described = admin.describe_consumer_groups([group])[group].result(30)
        assert described.partition_assignor == "roundrobin"
        assert len(described.members) == len(kinds)
    finally:
        close_all(members)


def test_cooperative_sticky_members_give_up_only_the_partitions_that_move(broker, unique):
    topic, group = unique("topic"), unique("group")
    create_topic(broker.bootstrap, topic, PARTITIONS)
    first = start_all([ConfluentMember(broker.bootstrap, group, topic, assignor="cooperative-sticky") for _ in range(2)])
    members = list(first)
    try:
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [3, 3], SETTLE_S, "two members, 3+3")
        before = {id(m): m.assignment() for m in first}
        revocations_before = {id(m): len(m.revoked) for m in first}
        members += start_all([ConfluentMember(broker.bootstrap, group, topic, assignor="cooperative-sticky")])
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [2, 2, 2], SETTLE_S, "three members, 2+2+2")
        for member in first:
            kept = member.assignment()
            assert kept < before[id(member)], "a member gave up nothing, or gained partitions"
            revoked_now = set().union(*member.revoked[revocations_before[id(member)]:])
            # Incremental: only the moving partition was revoked, never the ones kept.
            assert revoked_now == set(before[id(member)] - kept)
    finally:
        close_all(members)
