"""The admin side's ZooKeeper writes (Kafka's AdminZkClient), against a real ZooKeeper."""

from __future__ import annotations

import json
import uuid
from typing import Iterator

import pytest

from broker_core.cluster.errors import InvalidTopicNameError, TopicExistsError, UnknownTopicError
from broker_core.cluster.zk.admin_zk import (
    AdminOperationInProgressError,
    AdminZkClient,
    ConcurrentUpdateError,
    TopicMarkedForDeletionError,
)
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes import TopicAssignment
from broker_core.cluster.zk.znodes.layout import PERSISTENT_PATHS
from spate.structs import TopicPartition
from tests.support.zookeeper import ZooKeeperForTests

TOPIC_ID = uuid.UUID(int=0xABCDEF)


@pytest.fixture
def session(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[ZkSession]:
    session = zookeeper.session(zk_chroot)
    for path in PERSISTENT_PATHS:
        session.ensure_path(path)
    yield session


@pytest.fixture
def admin(session: ZkSession) -> AdminZkClient:
    return AdminZkClient(session, id_source=lambda: TOPIC_ID)


def _json(session: ZkSession, path: str) -> dict:
    return json.loads(session.get(path)[0])


def test_creating_a_topic_writes_configs_and_assignment_but_no_partition_state(admin, session) -> None:
    topic_id = admin.create_topic("orders", {0: [1, 2], 1: [2, 1]}, {"retention.ms": "5"})
    assert topic_id == TOPIC_ID
    assert _json(session, "/config/topics/orders") == {"version": 1, "config": {"retention.ms": "5"}}
    assignment = _json(session, "/brokers/topics/orders")
    assert assignment["partitions"] == {"0": [1, 2], "1": [2, 1]}
    assert assignment["version"] == 3 and assignment["topic_id"]
    assert session.exists("/brokers/topics/orders/partitions") is None


def test_a_taken_name_is_refused(admin) -> None:
    admin.create_topic("orders", {0: [1]}, {})
    with pytest.raises(TopicExistsError):
        admin.create_topic("orders", {0: [1]}, {})
    with pytest.raises(TopicExistsError):
        admin.validate_topic_create("orders")


def test_a_colliding_or_illegal_name_is_refused_before_writing(admin) -> None:
    admin.create_topic("my.topic", {0: [1]}, {})
    with pytest.raises(InvalidTopicNameError, match="collides with existing topic 'my.topic'"):
        admin.validate_topic_create("my_topic")
    with pytest.raises(InvalidTopicNameError):
        admin.validate_topic_create("bad name")


def test_deleting_asks_the_controller_once(admin, session) -> None:
    admin.create_topic("orders", {0: [1]}, {})
    assert admin.delete_topic("orders") is True
    assert session.exists("/admin/delete_topics/orders") is not None
    assert admin.delete_topic("orders") is False
    with pytest.raises(TopicMarkedForDeletionError, match="marked for deletion"):
        admin.validate_topic_create("orders")
    with pytest.raises(UnknownTopicError):
        admin.delete_topic("nothing")


def test_growing_a_topic_is_conditional_on_the_version_read(admin, session) -> None:
    admin.create_topic("orders", {0: [1]}, {})
    stored = admin.read_assignment("orders")
    grown = TopicAssignment(stored.assignment.topic_id, {0: (1,), 1: (2,)})
    admin.write_assignment("orders", grown, stored.version)
    assert _json(session, "/brokers/topics/orders")["partitions"] == {"0": [1], "1": [2]}
    with pytest.raises(ConcurrentUpdateError):
        admin.write_assignment("orders", grown, stored.version)


def test_config_changes_leave_a_notification_every_broker_sees(admin, session) -> None:
    admin.create_topic("orders", {0: [1]}, {})
    admin.change_topic_config("orders", {"cleanup.policy": "compact"})
    assert admin.read_topic_configs("orders") == {"cleanup.policy": "compact"}
    (name,) = session.get_children("/config/changes")
    assert name.startswith("config_change_")
    assert _json(session, f"/config/changes/{name}") == {"version": 2, "entity_path": "topics/orders"}
    with pytest.raises(UnknownTopicError):
        admin.change_topic_config("nothing", {})


def test_malformed_config_znodes_are_reported_or_skipped(admin, session) -> None:
    admin.create_topic("good", {0: [1]}, {"retention.ms": "7"})
    admin.create_topic("bad", {0: [1]}, {})
    session.set("/config/topics/bad", b"{not json", version=-1)
    with pytest.raises(ZNodeDecodeError, match="/config/topics/bad"):
        admin.read_topic_configs("bad")
    assert admin.read_all_topic_configs() == {"good": {"retention.ms": "7"}}


def test_a_preferred_election_waits_for_the_previous_one(admin, session) -> None:
    admin.elect_preferred_replicas([TopicPartition("t", 1), TopicPartition("t", 0)])
    assert _json(session, "/admin/preferred_replica_election") == {
        "version": 1, "partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    }
    with pytest.raises(AdminOperationInProgressError):
        admin.elect_preferred_replicas([TopicPartition("u", 0)])


def test_pending_reassignments_are_replaced_conditionally_and_removed_when_empty(admin, session) -> None:
    assert admin.read_pending_reassignments() == ({}, None)
    target = {TopicPartition("t", 0): (2, 3)}
    admin.write_pending_reassignments(target, None)
    pending, version = admin.read_pending_reassignments()
    assert pending == target
    with pytest.raises(ConcurrentUpdateError):
        admin.write_pending_reassignments(target, None)
    admin.write_pending_reassignments({}, version)
    assert session.exists("/admin/reassign_partitions") is None


def test_assignments_of_several_topics_skip_malformed_ones(admin, session) -> None:
    admin.create_topic("good", {0: [1]}, {})
    admin.create_topic("bad", {0: [1]}, {})
    session.set("/brokers/topics/bad", b'{"version":3,"partitions":"nope"}', version=-1)
    assert set(admin.read_assignments(["good", "bad", "absent"])) == {"good"}
    with pytest.raises(ZNodeDecodeError):
        admin.read_assignment("bad")
