"""A member of a consumer group: its subscription, its epochs and where its reconciliation stands."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Mapping

Partitions = Mapping[str, frozenset[int]]

# Member epochs with a meaning of their own in ConsumerGroupHeartbeat.
JOIN_GROUP_MEMBER_EPOCH = 0
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class MemberState(Enum):
    """Kafka's MemberState: where the member is on its way to its target assignment."""

    STABLE = "stable"  # owns exactly its target at the member epoch
    UNREVOKED_PARTITIONS = "unrevoked_partitions"  # must first give up partitions_pending_revocation
    UNRELEASED_PARTITIONS = "unreleased_partitions"  # waits for other members to release its partitions
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ConsumerGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 300_000
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    # The topics the regex matched at the last heartbeat.
    regex_topics: tuple[str, ...] = ()
    server_assignor: str | None = None
    assigned_partitions: Partitions = field(default_factory=dict)
    partitions_pending_revocation: Partitions = field(default_factory=dict)

    def with_changes(self, **changes: object) -> ConsumerGroupMember:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def subscribed_topics(self) -> frozenset[str]:
        return frozenset(self.subscribed_topic_names) | frozenset(self.regex_topics)

    @property
    def is_static(self) -> bool:
        return self.instance_id is not None

    @property
    def has_left_static(self) -> bool:
        """A static member that left with epoch -2: its assignment waits for its instance to return."""
        return self.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH


def partition_count(partitions: Partitions) -> int:
    return sum(len(ps) for ps in partitions.values())


def as_pairs(partitions: Partitions) -> set[tuple[str, int]]:
    return {(t, p) for t, ps in partitions.items() for p in ps}


def from_pairs(pairs: set[tuple[str, int]]) -> dict[str, frozenset[int]]:
    grouped: dict[str, set[int]] = {}
    for topic, p in pairs:
        grouped.setdefault(topic, set()).add(p)
    return {t: frozenset(ps) for t, ps in grouped.items()}
