"""JoinGroup and SyncGroup: forming generations, choosing protocols, relaying the leader's assignment."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    decode_group_metadata_value,
    decode_key,
)
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group_harness import RANGE, Harness, Reply, subscription

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


def test_members_that_do_not_rejoin_within_the_rebalance_timeout_are_removed(h: Harness) -> None:
    first = h.form_group(2, rebalance_ms=5000)
    newcomer = h.join_new(rebalance_ms=5000)
    rejoin = h.join(first[0].member_id, rebalance_ms=5000)
    h.scheduler.advance(4999)
    assert not rejoin.done
    h.scheduler.advance(1)
    assert rejoin.result.generation_id == 2 and newcomer.result.generation_id == 2
    assert set(h.group().members) == {first[0].member_id, newcomer.result.member_id}


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


def test_group_operations_on_a_partition_not_owned_are_not_coordinator() -> None:
    h = Harness(create_topic=False)
    assert h.join().error is E.NOT_COORDINATOR
    assert h.heartbeat("m", 1) is E.NOT_COORDINATOR


def test_a_coordinator_that_has_shut_down_is_not_available(h: Harness) -> None:
    h.coordinator.shutdown()
    assert h.join().error is E.COORDINATOR_NOT_AVAILABLE


def test_shutdown_answers_parked_joins_and_syncs_with_not_coordinator(h: Harness) -> None:
    a, b = h.join_new(), h.join_new()
    h.scheduler.advance(0)
    follower = a if a.result.member_id != a.result.leader_id else b
    parked_sync = h.sync(follower.result.member_id, 1)
    parked_join = h.join_new(group="other")
    h.coordinator.shutdown()
    assert parked_sync.error is E.NOT_COORDINATOR
    assert parked_join.error is E.NOT_COORDINATOR
    assert h.scheduler.pending == 0


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
