"""LeaveGroup: by member id or instance id, one or a batch, and withdrawing an unused member id."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.results import MemberIdentity
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


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
