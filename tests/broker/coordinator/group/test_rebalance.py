"""Rebalances: the join phase waits for every member, then the protocol most members prefer is chosen."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from broker_core.coordinator.group.results import MemberIdentity
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


def test_a_member_leaving_after_the_others_rejoined_completes_the_join_at_once(h: Harness) -> None:
    first = h.form_group(3)
    newcomer = h.join_new()
    rejoins = [h.join(first[i].member_id) for i in (0, 1)]
    assert not newcomer.done
    h.coordinator.leave_group(group_id="g", members=[MemberIdentity(first[2].member_id)])
    # No timer involved: the clock has not moved.
    assert newcomer.done and all(r.done for r in rejoins)
    assert {r.result.generation_id for r in (newcomer, *rejoins)} == {2}
    assert len(h.group()) == 3


def test_a_group_that_was_not_empty_skips_the_initial_delay() -> None:
    h = Harness(initial_rebalance_delay_ms=3000)
    joined = h.join_new()
    h.scheduler.advance(3000)  # the first generation waits the initial delay
    leader = joined.result
    h.sync(leader.member_id, 1, {leader.member_id: b""})
    newcomer = h.join_new()
    rejoin = h.join(leader.member_id)
    assert newcomer.done and rejoin.done  # at once: the delay is only for a group that was Empty


def test_an_abandoned_member_id_holds_the_join_for_its_session_timeout_not_the_rebalance_timeout(
    h: Harness,
) -> None:
    # A client that asked twice for a member id and uses only the second (librdkafka when subscribe() is called
    # again before the first answer arrives) leaves the first pending, as in Kafka (KIP-394).
    stable = h.form_group(1, session_ms=6000, rebalance_ms=300_000)
    abandoned = h.join(session_ms=6000, rebalance_ms=300_000)
    used = h.join_new(session_ms=6000, rebalance_ms=300_000)
    rejoin = h.join(stable[0].member_id, session_ms=6000, rebalance_ms=300_000)
    assert abandoned.error is E.MEMBER_ID_REQUIRED and not used.done and not rejoin.done
    h.scheduler.advance(5999)
    assert not rejoin.done
    h.scheduler.advance(1)
    assert used.done and rejoin.done
    assert used.result.generation_id == rejoin.result.generation_id == 2
