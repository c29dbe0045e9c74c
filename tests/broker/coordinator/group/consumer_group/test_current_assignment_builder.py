"""Reconciliation of one member: revoke before assign, member epochs, partitions wait for their owner."""

from __future__ import annotations

from broker_core.coordinator.group.consumer_group.consumer_group_member import ConsumerGroupMember, MemberState
from broker_core.coordinator.group.consumer_group.current_assignment_builder import next_member_state


def nobody(topic: str, partition: int) -> None:
    return None


def member(epoch: int, assigned: dict[str, set[int]], **kw) -> ConsumerGroupMember:
    return ConsumerGroupMember("m", member_epoch=epoch, assigned_partitions={t: frozenset(p) for t, p in
                                                                              assigned.items()}, **kw)


def test_a_stable_member_at_the_target_epoch_stays_as_it_is() -> None:
    m = member(3, {"t": {0, 1}})
    assert next_member_state(m, 3, {"t": frozenset({0, 1})}, nobody, None) is m


def test_free_partitions_come_at_once_with_the_new_epoch() -> None:
    m = next_member_state(member(3, {"t": {0}}), 4, {"t": frozenset({0, 1})}, nobody, None)
    assert (m.member_epoch, m.previous_member_epoch, m.state) == (4, 3, MemberState.STABLE)
    assert m.assigned_partitions == {"t": frozenset({0, 1})}


def test_a_member_first_revokes_and_keeps_its_epoch_until_it_has() -> None:
    m = next_member_state(member(3, {"t": {0, 1}}), 4, {"t": frozenset({0, 2})}, nobody, None)
    assert (m.member_epoch, m.state) == (3, MemberState.UNREVOKED_PARTITIONS)
    assert m.assigned_partitions == {"t": frozenset({0})}
    assert m.partitions_pending_revocation == {"t": frozenset({1})}
    # Still reporting partition 1: nothing moves.
    still = next_member_state(m, 4, {"t": frozenset({0, 2})}, nobody, {"t": frozenset({0, 1})})
    assert still is m
    # Partition 1 revoked: the member moves to epoch 4 and gets partition 2.
    done = next_member_state(m, 4, {"t": frozenset({0, 2})}, nobody, {"t": frozenset({0})})
    assert (done.member_epoch, done.state) == (4, MemberState.STABLE)
    assert done.assigned_partitions == {"t": frozenset({0, 2})}
    assert done.partitions_pending_revocation == {}


def test_a_partition_still_owned_by_another_member_waits_for_its_release() -> None:
    owners = {("t", 1): "other"}
    m = next_member_state(member(3, {"t": {0}}), 4, {"t": frozenset({0, 1})},
                          lambda t, p: owners.get((t, p)), None)
    assert (m.member_epoch, m.state) == (4, MemberState.UNRELEASED_PARTITIONS)
    assert m.assigned_partitions == {"t": frozenset({0})}
    owners.clear()  # the other member revoked it
    m = next_member_state(m, 4, {"t": frozenset({0, 1})}, nobody, None)
    assert m.state is MemberState.STABLE and m.assigned_partitions == {"t": frozenset({0, 1})}
    assert m.previous_member_epoch == 3  # the epoch did not move again
