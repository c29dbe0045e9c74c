"""The group coordinator follows the leadership of its ``__consumer_offsets`` partitions.

Two coordinators share one stored topic and one clock, as two brokers share
a partition's replicated log: one resigns, the other is elected and loads.
"""

from __future__ import annotations

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, ManualScheduler, MemoryOffsetsTopic

E = ErrorCode
S = GroupState
T0 = TopicPartition("t", 0)


def commit(h: Harness, offset: int, *, member: str = "", generation: int = -1) -> dict:
    return h.coordinator.commit_offsets(
        group_id="g", member_id=member, group_instance_id=None, generation_id=generation,
        offsets={T0: OffsetCommitEntry(offset)},
    )


def fetch(h: Harness):
    return h.coordinator.fetch_offsets(group_id="g", partitions=[T0])


def follower(topic: MemoryOffsetsTopic, scheduler: ManualScheduler) -> Harness:
    """A coordinator on another broker: it leads no partition of the topic yet."""
    return Harness(topic=topic.view(led=set()), scheduler=scheduler, create_topic=False)


def test_an_elected_partition_loads_on_a_later_turn_and_answers_load_in_progress_meanwhile() -> None:
    first = Harness()
    commit(first, 7)
    second = follower(first.topic, first.scheduler)
    partition = second.coordinator.partition_for("g")
    assert fetch(second).error is E.NOT_COORDINATOR
    second.coordinator.on_elected(partition, 1)
    assert fetch(second).error is E.COORDINATOR_LOAD_IN_PROGRESS
    second.scheduler.advance(0)
    assert fetch(second).offsets[T0].offset == 7
    assert second.coordinator.group_manager.coordinator_epoch(partition) == 1


def test_resigning_answers_parked_requests_not_coordinator_and_forgets_the_groups() -> None:
    h = Harness()
    joins = [h.join_new(), h.join_new()]
    h.scheduler.advance(0)
    results = [j.result for j in joins]
    follower_result = next(r for r in results if r.member_id != r.leader_id)
    parked_sync = h.sync(follower_result.member_id, follower_result.generation_id)
    assert not parked_sync.done
    h.coordinator.on_resigned(h.coordinator.partition_for("g"), 1)
    assert parked_sync.error is E.NOT_COORDINATOR
    assert h.group() is None
    assert h.heartbeat(follower_result.member_id, follower_result.generation_id) is E.NOT_COORDINATOR
    assert commit(h, 3) == {T0: E.NOT_COORDINATOR}
    assert fetch(h).error is E.NOT_COORDINATOR


def test_a_parked_join_is_answered_not_coordinator_and_no_timer_acts_after_resigning() -> None:
    h = Harness()
    (member,) = h.form_group(1, session_ms=5_000)
    parked = h.join_new(rebalance_ms=10_000)
    assert not parked.done
    group = h.group()
    h.coordinator.on_resigned(h.coordinator.partition_for("g"), 1)
    assert parked.error is E.NOT_COORDINATOR
    assert group.state is S.DEAD
    assert all(m.heartbeat_timer is None for m in group)
    assert h.scheduler.pending == 1  # the coordinator's own offset-expiry task; nothing of the group's
    appends = h.topic.appends
    # Session and rebalance timeouts pass: nothing is expired, rebalanced or written by this coordinator.
    h.scheduler.advance(60_000)
    assert h.topic.appends == appends
    assert member.member_id in group.members


def test_the_new_coordinator_serves_the_group_where_the_old_one_left_it() -> None:
    first = Harness()
    (member,) = first.form_group(1)
    commit(first, 11, member=member.member_id, generation=member.generation_id)
    second = follower(first.topic, first.scheduler)
    partition = first.coordinator.partition_for("g")
    first.coordinator.on_resigned(partition, 1)
    second.coordinator.on_elected(partition, 1)
    second.scheduler.advance(0)
    group = second.group()
    assert group.state is S.STABLE and member.member_id in group.members
    assert second.heartbeat(member.member_id, member.generation_id) is E.NONE
    assert fetch(second).offsets[T0].offset == 11
    assert first.heartbeat(member.member_id, member.generation_id) is E.NOT_COORDINATOR


def test_a_load_overtaken_by_a_newer_election_runs_once_at_the_newer_epoch() -> None:
    first = Harness()
    commit(first, 5)
    second = follower(first.topic, first.scheduler)
    partition = second.coordinator.partition_for("g")
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 1)
    second.coordinator.on_elected(partition, 2)
    second.scheduler.advance(0)
    assert second.topic.loads == [partition]
    assert second.coordinator.group_manager.coordinator_epoch(partition) == 2
    assert fetch(second).offsets[T0].offset == 5


def test_an_older_election_arriving_late_is_ignored() -> None:
    first = Harness()
    commit(first, 5)
    second = follower(first.topic, first.scheduler)
    partition = second.coordinator.partition_for("g")
    second.coordinator.on_elected(partition, 4)
    second.scheduler.advance(0)
    commit(second, 6)
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 3)
    second.scheduler.advance(0)
    assert second.topic.loads == []
    assert second.coordinator.group_manager.coordinator_epoch(partition) == 4
    assert fetch(second).offsets[T0].offset == 6


def test_a_load_pending_when_the_partition_moves_away_is_dropped() -> None:
    first = Harness()
    commit(first, 5)
    second = follower(first.topic, first.scheduler)
    partition = second.coordinator.partition_for("g")
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 1)
    second.coordinator.on_resigned(partition, 2)
    second.coordinator.on_elected(partition, 1)  # the election, delivered twice, arrives again after the move
    second.scheduler.advance(0)
    assert second.topic.loads == []
    assert fetch(second).error is E.NOT_COORDINATOR


def test_a_resignation_older_than_the_current_election_is_ignored() -> None:
    h = Harness()
    partition = h.coordinator.partition_for("g")
    h.coordinator.on_elected(partition, 3)
    commit(h, 9)
    h.coordinator.on_resigned(partition, 2)
    assert fetch(h).offsets[T0].offset == 9


def test_a_newer_epoch_of_a_loaded_partition_keeps_its_groups_and_parked_requests() -> None:
    h = Harness()
    h.form_group(1)
    parked = h.join_new()
    h.topic.loads.clear()
    h.coordinator.on_elected(h.coordinator.partition_for("g"), 5)
    h.scheduler.advance(0)
    assert h.topic.loads == [] and not parked.done
    assert h.group().state is S.PREPARING_REBALANCE


def test_elected_again_after_resigning_loads_what_the_other_coordinator_wrote() -> None:
    first = Harness()
    commit(first, 1)
    second = follower(first.topic, first.scheduler)
    partition = first.coordinator.partition_for("g")
    first.coordinator.on_resigned(partition, 1)
    second.coordinator.on_elected(partition, 1)
    second.scheduler.advance(0)
    commit(second, 2)
    second.coordinator.on_resigned(partition, 2)
    first.coordinator.on_elected(partition, 2)
    first.scheduler.advance(0)
    assert fetch(first).offsets[T0].offset == 2
