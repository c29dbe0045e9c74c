"""Classic and consumer groups side by side: which protocol a group id answers, and what it shares."""

from __future__ import annotations

from broker_core.coordinator.group.consumer_group.heartbeat_types import ConsumerHeartbeat, TopicsImage
from broker_core.coordinator.group.results import OffsetCommitEntry
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition
from tests.broker.coordinator.group.group_harness import Harness

E = ErrorCode
IMAGE = TopicsImage(names=lambda: ["t"], partition_count={"t": 2}.get)


def consumer_join(h: Harness, group: str = "g", member_id: str = "a"):
    return h.coordinator.consumer_group_heartbeat(ConsumerHeartbeat(
        group, member_id, 0, rebalance_timeout_ms=5000, subscribed_topic_names=("t",)), IMAGE)


def commit(h: Harness, member_id: str, epoch: int, group: str = "g"):
    return h.coordinator.commit_offsets(group_id=group, member_id=member_id, group_instance_id=None,
                                        generation_id=epoch, offsets={TopicPartition("t", 0): OffsetCommitEntry(5)})


def test_a_non_empty_classic_group_is_not_a_consumer_group() -> None:
    h = Harness()
    h.form_group(1)
    assert consumer_join(h).error is E.GROUP_ID_NOT_FOUND


def test_an_empty_classic_group_becomes_a_consumer_group_and_keeps_its_offsets() -> None:
    h = Harness()
    assert commit(h, "", -1)[TopicPartition("t", 0)] is E.NONE  # an Empty classic group with offsets
    joined = consumer_join(h)
    assert joined.error is E.NONE
    fetched = h.coordinator.fetch_offsets(group_id="g", partitions=[TopicPartition("t", 0)])
    assert fetched.offsets[TopicPartition("t", 0)].offset == 5


def test_a_non_empty_consumer_group_refuses_classic_members_and_an_empty_one_becomes_classic() -> None:
    h = Harness()
    a = consumer_join(h)
    assert h.join_new().error is E.INCONSISTENT_GROUP_PROTOCOL
    h.coordinator.consumer_group_heartbeat(ConsumerHeartbeat("g", a.member_id, -1), IMAGE)
    h.form_group(1)
    assert "g" not in h.coordinator.consumer_groups.groups


def test_members_commit_at_their_epoch_and_the_offsets_are_fetched() -> None:
    h = Harness()
    a = consumer_join(h)
    assert commit(h, a.member_id, a.member_epoch)[TopicPartition("t", 0)] is E.NONE
    assert commit(h, a.member_id, a.member_epoch - 1)[TopicPartition("t", 0)] is E.STALE_MEMBER_EPOCH
    assert commit(h, "", -1)[TopicPartition("t", 0)] is E.UNKNOWN_MEMBER_ID  # not while the group has members
    fetched = h.coordinator.fetch_offsets(group_id="g", partitions=[TopicPartition("t", 0)])
    assert fetched.offsets[TopicPartition("t", 0)].offset == 5


def test_groups_are_listed_with_their_type_and_described_by_their_own_api() -> None:
    h = Harness()
    consumer_join(h, group="new")
    h.form_group(1, group="old")
    listed = {g.group_id: g.group_type for g in h.coordinator.list_groups().groups}
    assert listed == {"new": "consumer", "old": "classic"}
    assert h.coordinator.describe_group("new").error is E.GROUP_ID_NOT_FOUND


def test_offsets_of_subscribed_topics_stay_while_members_consume_them() -> None:
    h = Harness()
    a = consumer_join(h)
    commit(h, a.member_id, a.member_epoch)
    result = h.coordinator.delete_offsets(group_id="g", partitions=[TopicPartition("t", 0)])
    assert result.partitions[TopicPartition("t", 0)] is E.GROUP_SUBSCRIBED_TO_TOPIC


def test_only_an_empty_consumer_group_is_deleted() -> None:
    h = Harness()
    a = consumer_join(h)
    assert h.coordinator.delete_groups(["g"]) == {"g": E.NON_EMPTY_GROUP}
    h.coordinator.consumer_group_heartbeat(ConsumerHeartbeat("g", a.member_id, -1), IMAGE)
    assert h.coordinator.delete_groups(["g"]) == {"g": E.NONE}
    assert "g" not in h.coordinator.consumer_groups.groups
