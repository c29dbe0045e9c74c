"""Moves one member one step towards its target assignment (Kafka's CurrentAssignmentBuilder).

The rules of KIP-848's incremental reconciliation:

* a member first gives up the partitions its target no longer holds: it stays
  at its epoch in UNREVOKED_PARTITIONS until a heartbeat reports it no longer
  owns them;
* then it moves to the target epoch and receives the partitions of its target
  that no other member still owns or is revoking; the others follow
  (UNRELEASED_PARTITIONS) as their owners release them;
* each member moves on its own heartbeats: no member waits for the group.
"""

from __future__ import annotations

from typing import Callable

from broker_core.coordinator.group.consumer_group.consumer_group_member import (
    ConsumerGroupMember,
    MemberState,
    Partitions,
    as_pairs,
    from_pairs,
)

# (topic, partition) -> the id of the member that owns it or is revoking it, or None when free.
OwnerOf = Callable[[str, int], "str | None"]


def next_member_state(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Partitions,
    owner_of: OwnerOf,
    owned: Partitions | None,
) -> ConsumerGroupMember:
    """The member after this heartbeat; ``owned`` is what the request says it owns (None: unchanged)."""
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owned is None or as_pairs(owned) & as_pairs(member.partitions_pending_revocation):
            return member  # still holds partitions it must give up
        return _compute(member.with_changes(partitions_pending_revocation={}), target_epoch, target, owner_of)
    if member.state is MemberState.STABLE and member.member_epoch == target_epoch:
        return member
    return _compute(member, target_epoch, target, owner_of)


def _compute(member: ConsumerGroupMember, target_epoch: int, target: Partitions,
             owner_of: OwnerOf) -> ConsumerGroupMember:
    current = as_pairs(member.assigned_partitions)
    wanted = as_pairs(target)
    kept = current & wanted
    revoking = current - wanted
    if revoking:
        return member.with_changes(
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned_partitions=from_pairs(kept),
            partitions_pending_revocation=from_pairs(revoking),
        )
    free = {tp for tp in wanted - kept if owner_of(*tp) in (None, member.member_id)}
    unreleased = wanted - kept - free
    return member.with_changes(
        state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
        previous_member_epoch=member.member_epoch if member.member_epoch != target_epoch
        else member.previous_member_epoch,
        member_epoch=target_epoch,
        assigned_partitions=from_pairs(kept | free),
        partitions_pending_revocation={},
    )
