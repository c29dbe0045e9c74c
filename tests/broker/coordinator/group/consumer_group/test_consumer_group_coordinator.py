"""ConsumerGroupHeartbeat at the coordinator: joining, epochs, incremental rebalances, fencing, leaving."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group.consumer_group.consumer_group import ConsumerGroupState
from broker_core.coordinator.group.consumer_group.consumer_group_config import ConsumerGroupConfig
from broker_core.coordinator.group.consumer_group.consumer_group_coordinator import ConsumerGroupCoordinator
from broker_core.coordinator.group.consumer_group.heartbeat_types import ConsumerHeartbeat, TopicsImage
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import ManualScheduler

E = ErrorCode
TOPICS = {"t": 6, "u": 2}


@pytest.fixture
def scheduler() -> ManualScheduler:
    return ManualScheduler()


@pytest.fixture
def coordinator(scheduler) -> ConsumerGroupCoordinator:
    ids = iter(f"member-{i}" for i in range(1000))
    return ConsumerGroupCoordinator(ConsumerGroupConfig(heartbeat_interval_ms=500, session_timeout_ms=3000),
                                    scheduler, member_id_factory=lambda: next(ids))


def image(counts=TOPICS) -> TopicsImage:
    return TopicsImage(names=lambda: list(counts), partition_count=counts.get)


def join(c: ConsumerGroupCoordinator, topics=("t",), member_id="", **kw):
    return c.heartbeat(ConsumerHeartbeat("g", member_id, 0, rebalance_timeout_ms=5000,
                                         subscribed_topic_names=tuple(topics), **kw), image())


def beat(c, result, owned=None, epoch=None, counts=TOPICS, **kw):
    return c.heartbeat(ConsumerHeartbeat("g", result.member_id, result.member_epoch if epoch is None else epoch,
                                         owned=owned, **kw), image(counts))


def test_the_first_member_gets_every_partition_at_group_epoch_one(coordinator) -> None:
    a = join(coordinator)
    assert (a.error, a.member_id, a.member_epoch, a.heartbeat_interval_ms) == (E.NONE, "member-0", 1, 500)
    assert a.assignment == {"t": frozenset(range(6))}
    assert coordinator.groups["g"].state is ConsumerGroupState.STABLE


def test_a_member_may_bring_its_own_id(coordinator) -> None:
    assert join(coordinator, member_id="chosen-by-client").member_id == "chosen-by-client"


def test_a_joining_member_waits_until_the_owner_revokes_then_gets_its_share(coordinator) -> None:
    a = join(coordinator)
    b = join(coordinator)
    assert b.member_epoch == 2 and b.assignment == {}  # every partition still belongs to a
    a2 = beat(coordinator, a, owned=a.assignment)
    assert a2.member_epoch == 1 and len(a2.assignment["t"]) == 3  # a keeps half, must revoke the rest
    a3 = beat(coordinator, a2, owned=a2.assignment)  # revoked
    assert a3.member_epoch == 2 and a3.assignment is None  # nothing new to hear: its assignment is unchanged
    b2 = beat(coordinator, b, owned={})
    assert b2.member_epoch == 2 and b2.assignment["t"] == set(range(6)) - a2.assignment["t"]
    assert coordinator.groups["g"].state is ConsumerGroupState.STABLE


def test_a_wrong_epoch_is_fenced_and_an_unknown_member_told_so(coordinator) -> None:
    a = join(coordinator)
    assert beat(coordinator, a, epoch=7).error is E.FENCED_MEMBER_EPOCH
    assert coordinator.heartbeat(ConsumerHeartbeat("g", "nobody", 1), image()).error is E.UNKNOWN_MEMBER_ID


def test_a_member_that_lost_an_answer_may_come_back_with_its_previous_epoch(coordinator) -> None:
    a = join(coordinator)
    beat(coordinator, a, owned=a.assignment, counts={"t": 8, "u": 2})  # metadata change: epoch 2
    again = beat(coordinator, a, epoch=1, owned=a.assignment, counts={"t": 8, "u": 2})
    assert again.error is E.NONE and again.member_epoch == 2


def test_a_subscription_change_bumps_the_group_epoch(coordinator) -> None:
    a = join(coordinator)
    b = beat(coordinator, a, owned=a.assignment, subscribed_topic_names=("t", "u"))
    assert b.member_epoch == 2 and b.assignment == {"t": frozenset(range(6)), "u": frozenset({0, 1})}


def test_a_regex_subscribes_to_every_matching_topic(coordinator) -> None:
    a = coordinator.heartbeat(ConsumerHeartbeat("g", "", 0, rebalance_timeout_ms=5000,
                                                subscribed_topic_regex="[tu]"), image())
    assert a.assignment == {"t": frozenset(range(6)), "u": frozenset({0, 1})}
    bad = coordinator.heartbeat(ConsumerHeartbeat("g", "", 0, rebalance_timeout_ms=5000,
                                                  subscribed_topic_regex="("), image())
    assert bad.error is E.INVALID_REGULAR_EXPRESSION


def test_leaving_with_epoch_minus_one_hands_the_partitions_to_the_others(coordinator) -> None:
    a = join(coordinator)
    b = join(coordinator)
    a2 = beat(coordinator, a, owned=a.assignment)
    beat(coordinator, a2, epoch=-1)
    assert "member-0" not in coordinator.groups["g"].members
    b2 = beat(coordinator, b, owned={})
    assert b2.assignment == {"t": frozenset(range(6))} and b2.member_epoch == 3


def test_a_silent_member_is_removed_when_its_session_ends(coordinator, scheduler) -> None:
    join(coordinator)
    scheduler.advance(3000)
    assert coordinator.groups["g"].is_empty


def test_a_static_member_keeps_its_assignment_across_a_bounce(coordinator) -> None:
    a = join(coordinator, instance_id="i1")
    duplicate = join(coordinator, instance_id="i1")
    assert duplicate.error is E.UNRELEASED_INSTANCE_ID
    beat(coordinator, a, epoch=-2, instance_id="i1")
    back = join(coordinator, instance_id="i1")
    assert back.error is E.NONE and back.member_id != a.member_id
    assert back.member_epoch == a.member_epoch and back.assignment == a.assignment
    assert coordinator.groups["g"].group_epoch == 1


def test_the_client_may_choose_the_server_assignor(coordinator) -> None:
    a = join(coordinator, server_assignor="range")
    assert coordinator.groups["g"].assignor_name == "range" and a.error is E.NONE
    assert join(coordinator, server_assignor="sticky").error is E.UNSUPPORTED_ASSIGNOR


def test_the_first_heartbeat_must_carry_a_subscription_and_rebalance_timeout(coordinator) -> None:
    assert coordinator.heartbeat(ConsumerHeartbeat("g", "", 0, rebalance_timeout_ms=5000), image()).error \
        is E.INVALID_REQUEST
    assert coordinator.heartbeat(ConsumerHeartbeat("g", "", 0, subscribed_topic_names=("t",)), image()).error \
        is E.INVALID_REQUEST


def test_offset_commits_need_the_members_current_epoch(coordinator) -> None:
    a = join(coordinator)
    assert coordinator.validate_offset_commit("g", a.member_id, 1) is E.NONE
    assert coordinator.validate_offset_commit("g", a.member_id, 0) is E.STALE_MEMBER_EPOCH
    assert coordinator.validate_offset_commit("g", a.member_id, 2) is E.FENCED_MEMBER_EPOCH
    assert coordinator.validate_offset_commit("g", "nobody", 1) is E.UNKNOWN_MEMBER_ID
    assert coordinator.validate_offset_commit("g", "", -1) is E.UNKNOWN_MEMBER_ID  # not while it has members
    assert coordinator.validate_offset_commit("other", "", -1) is None  # not a consumer group


def test_a_member_that_does_not_revoke_in_time_is_fenced(coordinator, scheduler) -> None:
    a = join(coordinator)
    b = join(coordinator)
    a2 = beat(coordinator, a, owned=a.assignment)  # must revoke 3 partitions
    assert coordinator.groups["g"].members[a2.member_id].partitions_pending_revocation
    for _ in range(3):  # keeps heartbeating, never revokes
        scheduler.advance(1700)
        beat(coordinator, a2, owned=a.assignment)
        beat(coordinator, b, owned={})
    assert a2.member_id not in coordinator.groups["g"].members


def test_offset_fetches_of_a_member_need_its_current_epoch(coordinator) -> None:
    a = join(coordinator)
    assert coordinator.validate_offset_fetch("g", a.member_id, 1) is E.NONE
    assert coordinator.validate_offset_fetch("g", a.member_id, 0) is E.STALE_MEMBER_EPOCH
    assert coordinator.validate_offset_fetch("g", "nobody", 1) is E.UNKNOWN_MEMBER_ID
    assert coordinator.validate_offset_fetch("g", None, -1) is E.NONE  # an admin tool
