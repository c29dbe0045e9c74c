"""SyncGroup: relaying the leader's assignment, stored before anyone hears of it, and the refusals."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    decode_group_metadata_value,
    decode_key,
)
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, Reply

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_sync_hands_each_member_the_leaders_assignment_and_stabilizes(h: Harness) -> None:
    a, b = h.join_new(), h.join_new()
    h.scheduler.advance(0)
    leader, follower = (a, b) if a.result.leader_id == a.result.member_id else (b, a)
    follower_sync = h.sync(follower.result.member_id, 1)
    assert not follower_sync.done
    leader_sync = h.sync(leader.result.member_id, 1, {
        leader.result.member_id: b"L", follower.result.member_id: b"F", "made-up-member": b"X",
    })
    assert (leader_sync.error, leader_sync.result.assignment) == (E.NONE, b"L")
    assert (follower_sync.error, follower_sync.result.assignment) == (E.NONE, b"F")
    assert h.group().state is S.STABLE


def test_sync_in_stable_returns_the_stored_assignment(h: Harness) -> None:
    results = h.form_group(2)
    again = h.sync(results[1].member_id, results[1].generation_id)
    assert again.result.assignment == results[1].member_id.encode()


def test_members_the_leader_leaves_out_get_an_empty_assignment(h: Harness) -> None:
    a, b = h.join_new(), h.join_new()
    h.scheduler.advance(0)
    leader, follower = (a, b) if a.result.leader_id == a.result.member_id else (b, a)
    follower_sync = h.sync(follower.result.member_id, 1)
    h.sync(leader.result.member_id, 1, {leader.result.member_id: b"all"})
    assert (follower_sync.error, follower_sync.result.assignment) == (E.NONE, b"")


def test_the_assignment_is_stored_before_anyone_hears_of_it(h: Harness) -> None:
    results = h.form_group(2)
    stored = [r for r in h.topic.records() if isinstance(decode_key(r.key), GroupMetadataKey)]
    value = decode_group_metadata_value(stored[-1].value)
    assert value.generation == results[0].generation_id
    assert {m.member_id: m.assignment for m in value.members} == {r.member_id: r.member_id.encode() for r in results}


def test_a_failed_store_of_the_assignment_answers_every_sync_with_the_error_and_rebalances(h: Harness) -> None:
    a, b = h.join_new(), h.join_new()
    h.scheduler.advance(0)
    leader, follower = (a, b) if a.result.leader_id == a.result.member_id else (b, a)
    follower_sync = h.sync(follower.result.member_id, 1)
    h.topic.fail_with = E.NOT_LEADER_OR_FOLLOWER
    leader_sync = h.sync(leader.result.member_id, 1, {leader.result.member_id: b"x"})
    assert leader_sync.error is E.NOT_COORDINATOR
    assert follower_sync.error is E.NOT_COORDINATOR
    assert h.group().state is S.PREPARING_REBALANCE


def test_sync_errors_unknown_member_stale_generation_and_rebalance_in_progress(h: Harness) -> None:
    assert h.sync("ghost", 1, group="nobody").error is E.UNKNOWN_MEMBER_ID
    results = h.form_group(2)
    member = results[0].member_id
    assert h.sync("ghost", 1).error is E.UNKNOWN_MEMBER_ID
    assert h.sync(member, 0).error is E.ILLEGAL_GENERATION
    h.join_new()
    assert h.sync(member, 1).error is E.REBALANCE_IN_PROGRESS


def test_sync_rejects_a_protocol_that_is_not_the_groups(h: Harness) -> None:
    results = h.form_group(1)
    reply = Reply()
    h.coordinator.sync_group(
        group_id="g", generation_id=1, member_id=results[0].member_id, group_instance_id=None, assignments={},
        respond=reply, protocol_type="consumer", protocol_name="roundrobin",
    )
    assert reply.error is E.INCONSISTENT_GROUP_PROTOCOL
