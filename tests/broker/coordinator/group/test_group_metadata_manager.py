"""Rebuilding groups from __consumer_offsets after a restart, and serving while a partition loads."""

from __future__ import annotations

from broker_core.coordinator.group import GroupCoordinator, GroupState
from broker_core.coordinator.group.offsets_log import offset_commit_key
from broker_core.coordinator.group.results import MemberIdentity, OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import (
    Harness,
    ManualScheduler,
    MemoryOffsetsTopic,
)

E = ErrorCode
S = GroupState
T0, U0 = TopicPartition("t", 0), TopicPartition("u", 0)
HOUR = 3600_000


def commit(h: Harness, offsets: dict, *, group: str = "g", member: str = "", generation: int = -1) -> dict:
    return h.coordinator.commit_offsets(
        group_id=group, member_id=member, group_instance_id=None, generation_id=generation,
        offsets={tp: OffsetCommitEntry(o) for tp, o in offsets.items()},
    )


def offset(h: Harness, tp: TopicPartition, group: str = "g") -> int:
    return h.coordinator.fetch_offsets(group_id=group, partitions=[tp]).offsets[tp].offset


def test_offsets_and_members_survive_a_restart() -> None:
    h = Harness()
    results = h.form_group(2)
    commit(h, {T0: 11}, member=results[0].member_id, generation=1)
    commit(h, {U0: 5}, group="simple")
    restarted = h.restart()
    group = restarted.group()
    assert group.state is S.STABLE and group.generation_id == 1
    assert {m.member_id: m.assignment for m in group} == {r.member_id: r.member_id.encode() for r in results}
    assert offset(restarted, T0) == 11
    assert offset(restarted, U0, group="simple") == 5
    # Members reconnecting after the restart carry on without a rebalance.
    assert restarted.heartbeat(results[0].member_id, 1) is E.NONE


def test_loaded_members_that_never_come_back_expire_after_their_session() -> None:
    h = Harness()
    h.form_group(1, session_ms=5000)
    restarted = h.restart()
    restarted.scheduler.advance(5000)
    assert restarted.group().state is S.EMPTY


def test_an_empty_group_comes_back_empty_with_its_offsets() -> None:
    h = Harness()
    member = h.form_group(1)[0].member_id
    commit(h, {T0: 3}, member=member, generation=1)
    h.coordinator.leave_group(group_id="g", members=[MemberIdentity(member)])
    restarted = h.restart()
    assert restarted.group().state is S.EMPTY and restarted.group().generation_id == 2
    assert offset(restarted, T0) == 3


def test_deleted_groups_and_offsets_stay_deleted_after_a_restart() -> None:
    h = Harness()
    commit(h, {T0: 3, U0: 4}, group="a")
    commit(h, {T0: 1}, group="b")
    h.coordinator.delete_offsets(group_id="a", partitions=[U0])
    h.coordinator.delete_groups(["b"])
    restarted = h.restart()
    assert offset(restarted, T0, "a") == 3 and offset(restarted, U0, "a") == -1
    assert restarted.group("b") is None


def test_unreadable_records_are_skipped_and_the_rest_still_loads() -> None:
    h = Harness()
    commit(h, {T0: 3})
    partition = h.coordinator.partition_for("g")
    h.topic.append_raw(partition, b"\x00\x01garbage", b"junk")
    h.topic.append_raw(partition, offset_commit_key("g", "t", 0), b"\x00\x03bad")
    h.topic.append_raw(partition, None, b"no key")
    h.topic.append_raw(partition, b"\x00\x05" + b"\x00\x01g", b"\x00\x00")  # another protocol's record
    restarted = h.restart()
    assert offset(restarted, T0) == 3


def test_requests_during_loading_get_load_in_progress_except_heartbeats() -> None:
    h = Harness()
    member = h.form_group(1)[0].member_id
    h.coordinator.shutdown()
    scheduler = ManualScheduler()
    coordinator = GroupCoordinator(h.config, h.topic, scheduler)
    coordinator.startup()  # loading waits for the scheduler's next turn
    assert coordinator.fetch_offsets(group_id="g", partitions=[T0]).error is E.COORDINATOR_LOAD_IN_PROGRESS
    assert coordinator.list_groups().error is E.COORDINATOR_LOAD_IN_PROGRESS
    assert coordinator.heartbeat(group_id="g", member_id=member, group_instance_id=None, generation_id=1) is E.NONE
    scheduler.advance(0)
    assert coordinator.fetch_offsets(group_id="g", partitions=[T0]).error is E.NONE
    assert coordinator.list_groups().error is E.NONE


def test_a_partition_whose_log_cannot_be_read_answers_coordinator_not_available() -> None:
    class BrokenTopic(MemoryOffsetsTopic):
        def read_batches(self, partition):
            raise OSError("disk gone")

    h = Harness(topic=BrokenTopic(partitions=4), create_topic=False)
    assert h.join().error is E.COORDINATOR_NOT_AVAILABLE
