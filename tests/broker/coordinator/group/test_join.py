"""JoinGroup: member ids, joining and rejoining, the refusals, and what a refused join leaves behind."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import RANGE, Harness, subscription

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_v4_join_without_member_id_is_answered_member_id_required_with_an_id(h: Harness) -> None:
    reply = h.join(client_id="app")
    assert reply.error is E.MEMBER_ID_REQUIRED
    assert reply.result.member_id == "app-m1"
    assert h.group().pending_members and not h.group().members


def test_join_before_v4_adds_the_member_at_once(h: Harness) -> None:
    reply = h.join(v4=False)
    h.scheduler.advance(0)
    assert reply.error is E.NONE
    assert reply.result.member_id == reply.result.leader_id == "client-m1"


def test_single_member_becomes_leader_of_generation_one_and_gets_its_own_metadata(h: Harness) -> None:
    reply = h.join_new()
    assert not reply.done  # parked until the (zero) initial delay passes
    h.scheduler.advance(0)
    result = reply.result
    assert (result.error, result.generation_id, result.protocol_name) == (E.NONE, 1, "range")
    assert result.leader_id == result.member_id
    assert [(m.member_id, m.metadata) for m in result.members] == [(result.member_id, RANGE[0].metadata)]
    assert h.group().state is S.COMPLETING_REBALANCE


def test_followers_get_no_member_list(h: Harness) -> None:
    results = h.form_group(3)
    followers = [r for r in results if r.member_id != r.leader_id]
    assert len(followers) == 2 and all(r.members == () for r in followers)
    assert len({r.leader_id for r in results}) == 1


def test_a_stable_follower_rejoining_unchanged_gets_the_current_generation_without_a_rebalance(h: Harness) -> None:
    results = h.form_group(2)
    follower = next(r for r in results if r.member_id != r.leader_id)
    again = h.join(follower.member_id)
    assert (again.error, again.result.generation_id) == (E.NONE, 1)
    assert h.group().state is S.STABLE


def test_the_leader_rejoining_triggers_a_rebalance(h: Harness) -> None:
    results = h.form_group(2)
    leader = next(r for r in results if r.member_id == r.leader_id)
    h.join(leader.member_id)
    assert h.group().state is S.PREPARING_REBALANCE


def test_a_member_changing_its_subscription_triggers_a_rebalance(h: Harness) -> None:
    results = h.form_group(2)
    follower = next(r for r in results if r.member_id != r.leader_id)
    h.join(follower.member_id, protocols=(Protocol("range", subscription("t", "u")),))
    assert h.group().state is S.PREPARING_REBALANCE


def test_a_retried_join_during_completing_rebalance_gets_the_same_generation(h: Harness) -> None:
    reply = h.join_new()
    h.scheduler.advance(0)
    again = h.join(reply.result.member_id)
    assert again.result.generation_id == reply.result.generation_id
    assert again.result.members == reply.result.members


def test_a_member_sharing_no_protocol_with_the_group_is_refused(h: Harness) -> None:
    h.form_group(1)
    reply = h.join(protocols=[Protocol("cooperative-sticky", subscription("t"))])
    assert reply.error is E.INCONSISTENT_GROUP_PROTOCOL


def test_a_member_of_another_protocol_type_is_refused(h: Harness) -> None:
    h.form_group(1)
    assert h.join(protocol_type="connect").error is E.INCONSISTENT_GROUP_PROTOCOL


def test_a_first_member_must_name_a_protocol_type_and_a_protocol(h: Harness) -> None:
    assert h.join(protocol_type="").error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocols=[]).error is E.INCONSISTENT_GROUP_PROTOCOL


@pytest.mark.parametrize("session_ms", [999, 60_001])
def test_session_timeouts_outside_the_broker_bounds_are_refused(h: Harness, session_ms: int) -> None:
    assert h.join(session_ms=session_ms).error is E.INVALID_SESSION_TIMEOUT
    assert h.group() is None


def test_an_empty_group_id_is_invalid_for_join_and_sync(h: Harness) -> None:
    assert h.join(group="").error is E.INVALID_GROUP_ID
    assert h.sync("m", 1, group="").error is E.INVALID_GROUP_ID


def test_joining_an_unknown_group_with_a_member_id_is_unknown_member(h: Harness) -> None:
    assert h.join("ghost").error is E.UNKNOWN_MEMBER_ID


def test_an_unknown_member_id_is_refused_by_an_existing_group(h: Harness) -> None:
    h.form_group(1)
    assert h.join("ghost").error is E.UNKNOWN_MEMBER_ID


def test_the_group_size_limit_refuses_extra_members() -> None:
    h = Harness(max_group_size=2)
    h.form_group(2)
    assert h.join(v4=False).error is E.GROUP_MAX_SIZE_REACHED
    assert len(h.group()) == 2


def test_a_join_superseding_a_parked_one_answers_the_old_one(h: Harness) -> None:
    results = h.form_group(2)
    leader = next(r for r in results if r.member_id == r.leader_id).member_id
    old = h.join(leader)
    new = h.join(leader)
    assert old.error is E.REBALANCE_IN_PROGRESS
    assert not new.done


def test_a_refused_first_join_leaves_no_group_behind(h: Harness) -> None:
    assert h.join(protocol_type="").error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.group() is None
    assert h.coordinator.list_groups().groups == ()


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
