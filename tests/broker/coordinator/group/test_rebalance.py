"""Rebalances: the join phase waits for every member, then the protocol most members prefer is chosen."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, subscription

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_a_new_member_triggers_a_rebalance_that_waits_for_every_member(h: Harness) -> None:
    first = h.form_group(2)
    newcomer = h.join_new()
    assert h.group().state is S.PREPARING_REBALANCE and not newcomer.done
    assert h.heartbeat(first[0].member_id, 1) is E.REBALANCE_IN_PROGRESS
    rejoin0 = h.join(first[0].member_id)
    assert not rejoin0.done
    rejoin1 = h.join(first[1].member_id)
    # The last member to rejoin completes the phase at once, without waiting for the timeout.
    assert rejoin0.done and rejoin1.done and newcomer.done
    assert {r.result.generation_id for r in (rejoin0, rejoin1, newcomer)} == {2}


def test_the_protocol_most_members_prefer_among_those_all_support_is_chosen(h: Harness) -> None:
    sub = subscription("t")
    prefs = [("roundrobin", "range", "sticky"), ("range", "roundrobin"), ("range", "roundrobin", "sticky")]
    replies = [h.join_new(protocols=[Protocol(n, sub) for n in names]) for names in prefs]
    h.scheduler.advance(0)
    assert {r.result.protocol_name for r in replies} == {"range"}


def test_a_tie_is_broken_by_the_first_members_preference(h: Harness) -> None:
    sub = subscription("t")
    a = h.join_new(protocols=[Protocol("roundrobin", sub), Protocol("range", sub)])
    b = h.join_new(protocols=[Protocol("range", sub), Protocol("roundrobin", sub)])
    h.scheduler.advance(0)
    assert a.result.protocol_name == b.result.protocol_name == "roundrobin"
