"""Heartbeats, session expiry, pending members, pending syncs and LeaveGroup."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.results import MemberIdentity
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group_harness import Harness

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_heartbeat_of_a_stable_member_is_accepted(h: Harness) -> None:
    results = h.form_group(1)
    assert h.heartbeat(results[0].member_id, 1) is E.NONE


def test_heartbeat_error_codes(h: Harness) -> None:
    assert h.heartbeat("ghost", 1, group="nobody") is E.UNKNOWN_MEMBER_ID
    assert h.heartbeat("m", 1, group="") is E.INVALID_GROUP_ID
    member = h.form_group(1)[0].member_id
    assert h.heartbeat("ghost", 1) is E.UNKNOWN_MEMBER_ID
    assert h.heartbeat(member, 0) is E.ILLEGAL_GENERATION
    assert h.heartbeat(member, 2) is E.ILLEGAL_GENERATION


def test_heartbeat_during_completing_rebalance_is_accepted(h: Harness) -> None:
    reply = h.join_new()
    h.scheduler.advance(0)
    assert h.group().state is S.COMPLETING_REBALANCE
    assert h.heartbeat(reply.result.member_id, 1) is E.NONE


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout(h: Harness) -> None:
    results = h.form_group(2, session_ms=6000)
    alive, silent = results[0].member_id, results[1].member_id
    for _ in range(3):
        h.scheduler.advance(2500)
        h.heartbeat(alive, 1)
    # 7.5 s without a heartbeat from ``silent``: it is gone, and the survivor must rejoin.
    assert not h.group().has_member(silent)
    assert h.group().state is S.PREPARING_REBALANCE
    assert h.heartbeat(alive, 1) is E.REBALANCE_IN_PROGRESS


def test_a_session_is_renewed_by_each_heartbeat(h: Harness) -> None:
    member = h.form_group(1, session_ms=6000)[0].member_id
    for _ in range(10):
        h.scheduler.advance(5000)
        assert h.heartbeat(member, 1) is E.NONE
    assert h.group().state is S.STABLE


def test_a_parked_join_keeps_a_known_member_alive_beyond_its_session(h: Harness) -> None:
    results = h.form_group(2, session_ms=2000, rebalance_ms=20_000)
    h.join(results[0].member_id, session_ms=2000, rebalance_ms=20_000)  # parked: the other has not rejoined
    h.scheduler.advance(2000)  # both sessions end; only the parked member survives
    assert set(h.group().members) == {results[0].member_id}
    h.scheduler.advance(0)
    assert h.group().state is S.COMPLETING_REBALANCE


def test_the_last_member_expiring_leaves_the_group_empty_and_stored(h: Harness) -> None:
    member = h.form_group(1, session_ms=3000)[0].member_id
    h.scheduler.advance(3000)
    group = h.group()
    assert not group.has_member(member)
    assert group.state is S.EMPTY and group.generation_id == 2


def test_a_member_id_handed_out_but_never_used_expires_and_unblocks_the_rebalance(h: Harness) -> None:
    results = h.form_group(1, session_ms=4000)
    pending = h.join(session_ms=4000)
    assert pending.error is E.MEMBER_ID_REQUIRED
    h.join(results[0].member_id, session_ms=4000)
    rejoined = h.join(results[0].member_id, session_ms=4000)
    assert not rejoined.done  # still waiting for the pending member
    h.scheduler.advance(4000)
    assert rejoined.result.generation_id == 2
    assert not h.group().pending_members


def test_a_new_member_that_vanishes_mid_join_is_dropped_after_the_new_member_timeout() -> None:
    h = Harness(new_member_join_timeout_ms=10_000)
    results = h.form_group(1, session_ms=60_000, rebalance_ms=60_000)
    newcomer = h.join_new(session_ms=60_000, rebalance_ms=60_000)
    for _ in range(4):
        h.scheduler.advance(2500)
        h.heartbeat(results[0].member_id, 1)
    assert newcomer.error is E.UNKNOWN_MEMBER_ID
    assert set(h.group().members) == {results[0].member_id}


def test_members_that_never_sync_are_removed_after_the_rebalance_timeout(h: Harness) -> None:
    a, b = h.join_new(rebalance_ms=5000), h.join_new(rebalance_ms=5000)
    h.scheduler.advance(0)
    leader = a if a.result.member_id == a.result.leader_id else b
    follower = b if leader is a else a
    h.sync(leader.result.member_id, 1, {leader.result.member_id: b"x"})
    h.heartbeat(follower.result.member_id, 1)
    h.scheduler.advance(5000)
    assert not h.group().has_member(follower.result.member_id)
    assert h.group().state is S.PREPARING_REBALANCE


def test_leave_removes_the_member_and_rebalances_the_rest(h: Harness) -> None:
    results = h.form_group(3)
    outcome = h.coordinator.leave_group(group_id="g", members=[MemberIdentity(results[2].member_id)])
    assert outcome.error is E.NONE and outcome.members[0].error is E.NONE
    assert h.group().state is S.PREPARING_REBALANCE and len(h.group()) == 2


def test_leave_of_a_parked_member_answers_its_join(h: Harness) -> None:
    results = h.form_group(2)
    parked = h.join(results[0].member_id)
    h.coordinator.leave_group(group_id="g", members=[MemberIdentity(results[0].member_id)])
    assert parked.error is E.UNKNOWN_MEMBER_ID


def test_the_last_member_leaving_completes_an_empty_generation(h: Harness) -> None:
    member = h.form_group(1)[0].member_id
    h.coordinator.leave_group(group_id="g", members=[MemberIdentity(member)])
    assert h.group().state is S.EMPTY and h.group().generation_id == 2


def test_batched_leave_reports_each_member(h: Harness) -> None:
    static = h.join(instance="i")
    dynamic = h.join_new()
    h.scheduler.advance(0)
    static_member = h.group().static_member_id("i")
    outcome = h.coordinator.leave_group(
        group_id="g",
        members=[
            MemberIdentity("ghost"),
            MemberIdentity("", "unknown-instance"),
            MemberIdentity("wrong-id", "i"),
            MemberIdentity("", "i"),
        ],
    )
    assert [m.error for m in outcome.members] == [
        E.UNKNOWN_MEMBER_ID, E.UNKNOWN_MEMBER_ID, E.FENCED_INSTANCE_ID, E.NONE,
    ]
    assert not h.group().has_member(static_member)
    assert set(h.group().members) == {dynamic.result.member_id}
    assert static.result.member_id == static_member


def test_leave_of_a_pending_member_withdraws_its_id(h: Harness) -> None:
    pending = h.join()
    outcome = h.coordinator.leave_group(group_id="g", members=[MemberIdentity(pending.result.member_id)])
    assert outcome.members[0].error is E.NONE
    assert not h.group().pending_members


def test_leave_from_an_unknown_group_reports_unknown_members(h: Harness) -> None:
    outcome = h.coordinator.leave_group(group_id="nobody", members=[MemberIdentity("m")])
    assert outcome.error is E.NONE and outcome.members[0].error is E.UNKNOWN_MEMBER_ID


def test_leave_with_an_empty_group_id_is_invalid(h: Harness) -> None:
    assert h.coordinator.leave_group(group_id="", members=[MemberIdentity("m")]).error is E.INVALID_GROUP_ID
