"""Heartbeats and member sessions: what renews a session, and what happens when one runs out."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness

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


def test_a_new_member_that_vanishes_mid_join_is_dropped_after_the_new_member_timeout() -> None:
    h = Harness(new_member_join_timeout_ms=10_000)
    results = h.form_group(1, session_ms=60_000, rebalance_ms=60_000)
    newcomer = h.join_new(session_ms=60_000, rebalance_ms=60_000)
    for _ in range(4):
        h.scheduler.advance(2500)
        h.heartbeat(results[0].member_id, 1)
    assert newcomer.error is E.UNKNOWN_MEMBER_ID
    assert set(h.group().members) == {results[0].member_id}
