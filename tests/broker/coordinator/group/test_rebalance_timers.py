"""The timers of a rebalance: the initial delay, the join deadline and the sync deadline."""

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


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed(h: Harness) -> None:
    first = h.form_group(2, rebalance_ms=5000)
    newcomer = h.join_new(rebalance_ms=5000)
    rejoin = h.join(first[0].member_id, rebalance_ms=5000)
    h.scheduler.advance(4999)
    assert not rejoin.done
    h.scheduler.advance(1)
    assert rejoin.result.generation_id == 2 and newcomer.result.generation_id == 2
    assert set(h.group().members) == {first[0].member_id, newcomer.result.member_id}


def test_the_initial_delay_holds_a_new_group_and_extends_while_members_keep_coming() -> None:
    h = Harness(initial_rebalance_delay_ms=3000)
    first = h.join_new(rebalance_ms=30_000)
    h.scheduler.advance(2000)
    second = h.join_new(rebalance_ms=30_000)
    h.scheduler.advance(1000)  # the first delay ends; a member arrived, so wait another delay
    assert not first.done
    h.scheduler.advance(2999)
    assert not first.done
    h.scheduler.advance(1)
    assert first.result.generation_id == second.result.generation_id == 1


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
