"""A consumer group's state (Kafka's ConsumerGroup): epochs, members, target assignment, owners.

``group_epoch`` moves on every change of membership, subscriptions or the
subscribed topics' partition counts; ``assignment_epoch`` is the group epoch
the target assignment was computed at. The group's state follows from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from broker_core.coordinator.group.consumer_group.consumer_group_member import (
    ConsumerGroupMember,
    MemberState,
    Partitions,
)


class ConsumerGroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


@dataclass
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    target_assignment: dict[str, Partitions] = field(default_factory=dict)
    # The partition counts of subscribed topics at the last epoch bump, to see metadata changes.
    subscribed_partition_counts: dict[str, int] = field(default_factory=dict)
    # (topic, partition) -> member owning or revoking it: who must release a partition first.
    owners: dict[tuple[str, int], str] = field(default_factory=dict)

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.assignment_epoch < self.group_epoch:
            return ConsumerGroupState.ASSIGNING
        for member in self.members.values():
            if member.member_epoch != self.assignment_epoch or member.state is not MemberState.STABLE:
                if not member.has_left_static:
                    return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    @property
    def is_empty(self) -> bool:
        return not self.members

    def subscribed_topics(self) -> set[str]:
        return {t for m in self.members.values() for t in m.subscribed_topics}

    def member_by_instance(self, instance_id: str) -> ConsumerGroupMember | None:
        for member in self.members.values():
            if member.instance_id == instance_id:
                return member
        return None

    def owner_of(self, topic: str, partition: int) -> str | None:
        return self.owners.get((topic, partition))

    def update_member(self, member: ConsumerGroupMember) -> None:
        """Store ``member`` and keep the owner index in step with its partitions."""
        self._release(self.members.get(member.member_id))
        self.members[member.member_id] = member
        for holding in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic, partitions in holding.items():
                for p in partitions:
                    self.owners[(topic, p)] = member.member_id

    def remove_member(self, member_id: str) -> ConsumerGroupMember | None:
        member = self.members.pop(member_id, None)
        self._release(member)
        self.target_assignment.pop(member_id, None)
        return member

    def _release(self, member: ConsumerGroupMember | None) -> None:
        if member is None:
            return
        for holding in (member.assigned_partitions, member.partitions_pending_revocation):
            for topic, partitions in holding.items():
                for p in partitions:
                    if self.owners.get((topic, p)) == member.member_id:
                        del self.owners[(topic, p)]
