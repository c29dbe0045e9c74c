"""Consumer groups in __consumer_offsets: what each heartbeat writes, and a new coordinator reading it back."""

from __future__ import annotations

import uuid

from broker_core.coordinator.group.consumer_group.consumer_group_config import ConsumerGroupConfig
from broker_core.coordinator.group.consumer_group.consumer_group_coordinator import ConsumerGroupCoordinator
from broker_core.coordinator.group.consumer_group.consumer_group_log import ConsumerGroupLog, TopicIds
from broker_core.coordinator.group.consumer_group.consumer_group_member import MemberState
from broker_core.coordinator.group.consumer_group.heartbeat_types import ConsumerHeartbeat, TopicsImage
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import ManualScheduler

IDS = {"t": uuid.UUID(int=7)}
TOPIC_IDS = TopicIds(id_of=IDS.get, name_of={v: k for k, v in IDS.items()}.get)
IMAGE = TopicsImage(names=lambda: ["t"], partition_count={"t": 4}.get)


def coordinator(written: list) -> ConsumerGroupCoordinator:
    def write(group_id, records):
        written.extend(records)
        return ErrorCode.NONE
    return ConsumerGroupCoordinator(ConsumerGroupConfig(), ManualScheduler(), log=ConsumerGroupLog(TOPIC_IDS),
                                    writer=write)


def key_versions(records) -> list[int]:
    return [int.from_bytes(k[:2], "big") for k, _ in records]


def test_a_join_writes_the_epoch_the_member_its_target_and_its_assignment() -> None:
    written: list = []
    joined = coordinator(written).heartbeat(ConsumerHeartbeat("g", "a", 0, rebalance_timeout_ms=5000,
                                                              subscribed_topic_names=("t",)), IMAGE)
    assert joined.member_epoch == 1
    assert sorted(key_versions(written)) == [3, 5, 6, 7, 8]


def test_a_steady_heartbeat_writes_nothing() -> None:
    written: list = []
    c = coordinator(written)
    a = c.heartbeat(ConsumerHeartbeat("g", "a", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("t",)), IMAGE)
    written.clear()
    c.heartbeat(ConsumerHeartbeat("g", "a", a.member_epoch, owned=a.assignment), IMAGE)
    assert written == []


def test_a_new_coordinator_carries_on_from_the_records() -> None:
    written: list = []
    c = coordinator(written)
    a = c.heartbeat(ConsumerHeartbeat("g", "a", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("t",)), IMAGE)
    b = c.heartbeat(ConsumerHeartbeat("g", "b", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("t",),
                                      instance_id="i"), IMAGE)
    a = c.heartbeat(ConsumerHeartbeat("g", "a", a.member_epoch, owned=a.assignment), IMAGE)  # must revoke two
    original = c.groups["g"]

    restored = ConsumerGroupLog(TOPIC_IDS).replay(written)["g"]
    assert (restored.group_epoch, restored.assignment_epoch) == (original.group_epoch, original.assignment_epoch)
    assert restored.target_assignment == original.target_assignment
    assert restored.members == original.members
    assert restored.members["a"].state is MemberState.UNREVOKED_PARTITIONS
    assert restored.members["b"].instance_id == "i"

    # The new coordinator answers the members at their epochs, and the rebalance goes on.
    after = coordinator([])
    after.load({"g": restored})
    a2 = after.heartbeat(ConsumerHeartbeat("g", "a", 1, owned=a.assignment), IMAGE)
    assert (a2.error, a2.member_epoch) == (ErrorCode.NONE, 2)
    b2 = after.heartbeat(ConsumerHeartbeat("g", "b", b.member_epoch, owned={}), IMAGE)
    assert b2.error is ErrorCode.NONE and len(b2.assignment["t"]) == 2


def test_a_member_that_left_is_tombstoned() -> None:
    written: list = []
    c = coordinator(written)
    c.heartbeat(ConsumerHeartbeat("g", "a", 0, rebalance_timeout_ms=5000, subscribed_topic_names=("t",)), IMAGE)
    c.heartbeat(ConsumerHeartbeat("g", "a", -1), IMAGE)
    restored = ConsumerGroupLog(TOPIC_IDS).replay(written)["g"]
    assert restored.members == {} and restored.group_epoch == 2
