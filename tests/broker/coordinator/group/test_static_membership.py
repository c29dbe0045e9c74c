"""Static membership (group.instance.id): restarts within the session keep assignments, no rebalance."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, subscription

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def form_static_group(h: Harness, instances: list[str], **kwargs) -> dict[str, str]:
    """Static members join together and sync; returns instance id -> member id."""
    replies = {i: h.join(instance=i, **kwargs) for i in instances}  # no MEMBER_ID_REQUIRED for static members
    h.scheduler.advance(0)
    results = {i: r.result for i, r in replies.items()}
    leader = next(r for r in results.values() if r.member_id == r.leader_id)
    assignment = {r.member_id: f"parts-of-{i}".encode() for i, r in results.items()}
    for r in results.values():
        h.sync(r.member_id, r.generation_id, assignment if r is leader else None)
    assert h.group().state is S.STABLE
    return {i: r.member_id for i, r in results.items()}


def test_static_members_get_an_id_without_member_id_required(h: Harness) -> None:
    reply = h.join(instance="host-1")
    h.scheduler.advance(0)
    assert reply.error is E.NONE and reply.result.member_id.startswith("host-1-")


def test_a_restarted_static_follower_takes_its_old_place_without_a_rebalance(h: Harness) -> None:
    ids = form_static_group(h, ["a", "b", "c"])
    generation = h.group().generation_id
    follower = next(i for i, m in ids.items() if not h.group().is_leader(m))
    rejoin = h.join(instance=follower)
    result = rejoin.result
    assert result.error is E.NONE and result.member_id != ids[follower]
    assert result.generation_id == generation and h.group().state is S.STABLE
    sync = h.sync(result.member_id, generation, instance=follower)
    assert sync.result.assignment == f"parts-of-{follower}".encode()
    for other, member_id in ids.items():
        if other != follower:
            assert h.heartbeat(member_id, generation, instance=other) is E.NONE


def test_the_old_member_id_of_a_replaced_static_member_is_fenced(h: Harness) -> None:
    ids = form_static_group(h, ["a", "b"])
    new_id = h.join(instance="a").result.member_id
    assert h.heartbeat(ids["a"], 1, instance="a") is E.FENCED_INSTANCE_ID
    assert h.sync(ids["a"], 1, instance="a").error is E.FENCED_INSTANCE_ID
    assert h.join(ids["a"], instance="a").error is E.FENCED_INSTANCE_ID
    tp = TopicPartition("t", 0)
    outcome = h.coordinator.commit_offsets(
        group_id="g", member_id=ids["a"], group_instance_id="a", generation_id=1, offsets={tp: OffsetCommitEntry(1)}
    )
    assert outcome == {tp: E.FENCED_INSTANCE_ID}
    assert h.heartbeat(new_id, 1, instance="a") is E.NONE


def test_a_restarted_static_leader_is_told_the_old_leader_id_so_it_does_not_reassign(h: Harness) -> None:
    ids = form_static_group(h, ["a", "b"])
    leader_instance = next(i for i, m in ids.items() if h.group().is_leader(m))
    result = h.join(instance=leader_instance).result
    assert result.leader_id == ids[leader_instance] != result.member_id
    assert result.members == ()
    assert h.group().is_leader(result.member_id)  # it does lead the next rebalance
    assert h.group().state is S.STABLE


def test_a_static_member_rejoining_with_another_protocol_triggers_a_rebalance(h: Harness) -> None:
    form_static_group(h, ["a", "b"])
    sub = subscription("t")
    reply = h.join(instance="a", protocols=[Protocol("roundrobin", sub), Protocol("range", sub)])
    # Still "range" for the group (b only supports range): nothing to rebalance for.
    assert reply.done and h.group().state is S.STABLE
    h2 = Harness()
    form_static_group(h2, ["a"], protocols=[Protocol("range", sub), Protocol("roundrobin", sub)])
    rejoin = h2.join(instance="a", protocols=[Protocol("roundrobin", sub), Protocol("range", sub)])
    assert h2.group().state is S.COMPLETING_REBALANCE  # its only member rejoined at once
    assert rejoin.result.protocol_name == "roundrobin" and rejoin.result.generation_id == 2


def test_the_restart_is_stored_so_a_broker_restart_keeps_the_new_member_id(h: Harness) -> None:
    form_static_group(h, ["a", "b"])
    new_id = h.join(instance="a").result.member_id
    restarted = h.restart()
    assert restarted.group().static_member_id("a") == new_id


def test_a_failed_store_undoes_the_replacement(h: Harness) -> None:
    ids = form_static_group(h, ["a", "b"])
    h.topic.fail_with = E.NOT_ENOUGH_REPLICAS
    reply = h.join(instance="a")
    assert reply.error is E.COORDINATOR_NOT_AVAILABLE
    assert h.group().static_member_id("a") == ids["a"]
    assert h.heartbeat(ids["a"], 1, instance="a") is E.NONE


def test_static_members_that_do_not_rejoin_are_kept_through_a_rebalance_until_their_session_ends(h: Harness) -> None:
    ids = form_static_group(h, ["a", "b"], session_ms=10_000, rebalance_ms=3000)
    newcomer = h.join_new(session_ms=10_000, rebalance_ms=3000)
    rejoin_a = h.join(ids["a"], instance="a", session_ms=10_000, rebalance_ms=3000)
    h.scheduler.advance(3000)
    assert rejoin_a.result.generation_id == 2 and newcomer.done
    assert h.group().has_member(ids["b"])  # kept despite not rejoining
    h.scheduler.advance(7000)
    assert not h.group().has_member(ids["b"])


def test_a_static_member_replaced_during_completing_rebalance_forces_a_new_rebalance(h: Harness) -> None:
    a = h.join(instance="a")
    b = h.join(instance="b")
    h.scheduler.advance(0)
    assert h.group().state is S.COMPLETING_REBALANCE
    follower = a if a.result.member_id != a.result.leader_id else b
    parked = h.sync(follower.result.member_id, 1)
    instance = "a" if follower is a else "b"
    h.join(instance=instance)
    assert parked.error is E.FENCED_INSTANCE_ID
    assert h.group().state is S.PREPARING_REBALANCE


def test_a_full_group_still_takes_back_its_own_static_member() -> None:
    h = Harness(max_group_size=2)
    ids = form_static_group(h, ["a", "b"])
    assert h.join(v4=False).error is E.GROUP_MAX_SIZE_REACHED
    reply = h.join(instance="a")
    assert reply.error is E.NONE and reply.result.member_id != ids["a"]
