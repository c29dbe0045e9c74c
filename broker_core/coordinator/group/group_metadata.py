"""A classic consumer group: its state machine, members, chosen protocol and offsets.

States and the transitions allowed into each (Kafka's ``GroupState``)::

    Empty ───────────────┐
      ▲                  ▼
      │          PreparingRebalance ◄──────────┐
      └── (no members) ──┤                     │
                         ▼                     │
                 CompletingRebalance ──────────┤
                         │                     │
                         ▼                     │
                       Stable ─────────────────┘

    Dead: reachable from every state; the group is gone and its entry is
    about to be removed (deleted, or emptied and all its offsets expired).

``transition_to`` checks :data:`VALID_PREVIOUS_STATES` and raises
:class:`IllegalGroupStateTransition` for anything else: reaching one means a
coordinator bug, never bad client input. A group loaded from
``__consumer_offsets`` starts directly in Stable (members) or Empty.
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import Iterator, Mapping, Sequence

from broker_core.coordinator.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE, group_subscribed_topics
from broker_core.coordinator.group.member import JoinCallback, MemberMetadata, Protocol
from broker_core.coordinator.group.offsets import CommittedOffset
from broker_core.coordinator.group.results import GroupDescription, JoinedMember, JoinGroupResult, MemberDescription
from broker_core.coordinator.group.supported_protocols import SupportedProtocols
from broker_core.coordinator.scheduler import TimerHandle
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


S = GroupState
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    S.PREPARING_REBALANCE: frozenset({S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}),
    S.COMPLETING_REBALANCE: frozenset({S.PREPARING_REBALANCE}),
    S.STABLE: frozenset({S.COMPLETING_REBALANCE}),
    S.EMPTY: frozenset({S.PREPARING_REBALANCE}),
    S.DEAD: frozenset({S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD}),
}


class IllegalGroupStateTransition(Exception):
    """A transition the state table forbids: a coordinator bug, reported rather than applied."""

    def __init__(self, group_id: str, current: GroupState, target: GroupState) -> None:
        super().__init__(f"group {group_id!r} cannot go from {current} to {target}")
        self.group_id = group_id
        self.current = current
        self.target = target


class GroupMetadata:
    """One group's in-memory state. Not thread-safe: only the coordinator's loop touches it."""

    def __init__(
        self,
        group_id: str,
        *,
        state: GroupState = GroupState.EMPTY,
        now_ms: int | None = None,
        generation_id: int = 0,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        leader_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.state = state
        # When the group entered its current state; offsets of an Empty group expire from here.
        self.state_timestamp_ms = now_ms
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.leader_id = leader_id
        self.members: dict[str, MemberMetadata] = {}
        # Kept as members come, go and park or answer their JoinGroup, so no request counts over all members.
        self._supported_protocols = SupportedProtocols()
        self._awaiting_join = 0
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        # Member ids handed out with MEMBER_ID_REQUIRED, not yet joined; each with its expiry timer.
        self.pending_members: dict[str, TimerHandle | None] = {}
        # Members of the new generation whose SyncGroup has not arrived yet.
        self.pending_sync_members: set[str] = set()
        # Whether a member joined during the initial delay, which extends it.
        self.new_member_added = False
        self.join_timer: TimerHandle | None = None
        self.join_timer_is_initial_delay = False
        self.sync_timer: TimerHandle | None = None
        self.subscribed_topics: frozenset[str] | None = None
        self.offsets: dict[TopicPartition, CommittedOffset] = {}
        # Offsets of transactions still open, per producer id: invisible until the
        # transaction commits (they join ``offsets``) or aborts (they are dropped).
        self.pending_txn_offsets: dict[int, dict[TopicPartition, CommittedOffset]] = {}

    def __repr__(self) -> str:
        return f"GroupMetadata({self.group_id!r}, {self.state}, generation {self.generation_id}, {len(self.members)} members)"

    # --- state -----------------------------------------------------------------------------

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise IllegalGroupStateTransition(self.group_id, self.state, target)
        self.state = target
        self.state_timestamp_ms = now_ms

    @property
    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[GroupState.PREPARING_REBALANCE]

    # --- members ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[MemberMetadata]:
        return iter(list(self.members.values()))

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def get_member(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add_member(self, member: MemberMetadata) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if member.member_id in self.members:
            raise ValueError(f"member {member.member_id} is already in group {self.group_id}")
        self.members[member.member_id] = member
        self._supported_protocols.add(member.protocol_names)
        self._awaiting_join += member.is_awaiting_join
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        self.pending_members.pop(member.member_id, None)
        if self.leader_id is None:
            self.leader_id = member.member_id

    def remove_member(self, member_id: str) -> MemberMetadata | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        member.cancel_heartbeat()
        self._supported_protocols.remove(member.protocol_names)
        self._awaiting_join -= member.is_awaiting_join
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        self.pending_sync_members.discard(member_id)
        if self.leader_id == member_id:
            # Prefer a member that has already rejoined, so a rebalance in progress keeps a live leader.
            joined = [m.member_id for m in self.members.values() if m.is_awaiting_join]
            self.leader_id = joined[0] if joined else next(iter(self.members), None)
        return member

    def update_protocols(self, member: MemberMetadata, protocols: Sequence[Protocol]) -> None:
        """The member now offers ``protocols`` (a rejoin, or a static member's restart)."""
        counted = self.members.get(member.member_id) is member
        if counted:
            self._supported_protocols.remove(member.protocol_names)
        member.protocols = tuple(protocols)
        if counted:
            self._supported_protocols.add(member.protocol_names)

    def park_join(self, member: MemberMetadata, respond: JoinCallback) -> JoinCallback | None:
        """Park the member's JoinGroup until the join phase completes; returns the one it supersedes."""
        previous = self.take_join_callback(member)
        member.join_callback = respond
        self._awaiting_join += self.members.get(member.member_id) is member
        return previous

    def take_join_callback(self, member: MemberMetadata) -> JoinCallback | None:
        """The member's parked JoinGroup callback, cleared so it is answered once; None if none is parked."""
        callback, member.join_callback = member.join_callback, None
        if callback is not None and self.members.get(member.member_id) is member:
            self._awaiting_join -= 1
        return callback

    def withdraw_pending_member(self, member_id: str) -> bool:
        """Forget a member id handed out with MEMBER_ID_REQUIRED and stop its expiry; False if unknown."""
        if member_id not in self.pending_members:
            return False
        timer = self.pending_members.pop(member_id)
        if timer is not None:
            timer.cancel()
        return True

    def static_member_id(self, group_instance_id: str | None) -> str | None:
        if group_instance_id is None:
            return None
        return self.static_members.get(group_instance_id)

    def is_static_member_fenced(self, group_instance_id: str | None, member_id: str) -> bool:
        """True when ``group_instance_id`` now belongs to a different member id."""
        registered = self.static_member_id(group_instance_id)
        return registered is not None and registered != member_id

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> MemberMetadata:
        """Give a known static member a new member id, keeping its assignment and leadership."""
        member = self.members.pop(old_member_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        self.static_members[group_instance_id] = new_member_id
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        return member

    @property
    def awaiting_join_count(self) -> int:
        return self._awaiting_join

    @property
    def has_all_members_joined(self) -> bool:
        return self.awaiting_join_count == len(self.members) and not self.pending_members

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, else promote any rejoined member; False if none rejoined."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # --- protocol selection ----------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """Protocols every current member supports."""
        return self._supported_protocols.shared_by(len(self.members))

    def supports_protocols(self, protocol_type: str, protocol_names: set[str]) -> bool:
        """Whether a member offering these may join: same type, and a protocol in common."""
        if not self.members:
            return bool(protocol_type) and bool(protocol_names)
        return protocol_type == self.protocol_type and bool(self.candidate_protocols() & protocol_names)

    def select_protocol(self) -> str:
        """The candidate most members prefer; ties go to the protocol listed first by the longest-standing member.

        The coordinator only chooses among the clients' own assignors; which
        partitions go where is then decided by the leader, running that assignor.
        """
        candidates = self.candidate_protocols()
        if not candidates:
            raise ValueError(f"members of group {self.group_id} share no protocol")
        votes = Counter(m.vote(candidates) for m in self.members.values())
        first = next(iter(self.members.values()))
        preference = {name: i for i, name in enumerate(first.protocol_names)}
        return min(candidates, key=lambda name: (-votes[name], preference.get(name, len(preference)), name))

    def current_member_metadata(self) -> tuple[JoinedMember, ...]:
        """Each member with its metadata for the chosen protocol, for the leader's JoinGroup response."""
        if self.protocol_name is None:
            raise ValueError(f"group {self.group_id} has no protocol chosen")
        return tuple(
            JoinedMember(m.member_id, m.group_instance_id, m.metadata_for(self.protocol_name))
            for m in self.members.values()
        )

    def current_generation(self, member_id: str, *, with_members: bool) -> JoinGroupResult:
        """The JoinGroup answer for ``member_id`` in the current generation (the leader's lists every member)."""
        return JoinGroupResult(
            ErrorCode.NONE,
            member_id=member_id,
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader_id=self.leader_id or "",
            members=self.current_member_metadata() if with_members else (),
        )

    def init_next_generation(self, now_ms: int) -> None:
        """Close the join phase: bump the generation and await the leader's assignment (or go Empty)."""
        self.generation_id += 1
        self.pending_sync_members.clear()
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = group_subscribed_topics(
                self.protocol_type, (m.metadata_for(self.protocol_name) for m in self.members.values())
            )
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = None
            self.transition_to(GroupState.EMPTY, now_ms)

    def refresh_subscribed_topics(self) -> None:
        if self.protocol_name is None or not self.members:
            self.subscribed_topics = None
            return
        self.subscribed_topics = group_subscribed_topics(
            self.protocol_type, (m.metadata_for(self.protocol_name) for m in self.members.values())
        )

    # --- offsets ---------------------------------------------------------------------------

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_subscribed_to(self, topic: str) -> bool:
        """Whether a member's subscription names ``topic`` (False when subscriptions are unreadable)."""
        return self.subscribed_topics is not None and topic in self.subscribed_topics

    @property
    def has_offsets(self) -> bool:
        """Whether anything is stored for the group: committed offsets, or those of an open transaction."""
        return bool(self.offsets) or bool(self.pending_txn_offsets)

    def has_pending_txn_offset(self, tp: TopicPartition) -> bool:
        return any(tp in pending for pending in self.pending_txn_offsets.values())

    def add_pending_txn_offsets(
        self, producer_id: int, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> None:
        """Offsets a transaction wrote; a later write of the same partition replaces an earlier one."""
        self.pending_txn_offsets.setdefault(producer_id, {}).update(offsets)

    def complete_txn_offsets(self, producer_id: int, *, commit: bool) -> int:
        """End ``producer_id``'s transaction here; returns how many offsets became visible.

        On commit each pending offset replaces the committed one unless that
        one's record was written after it: the log's order decides, exactly as
        when the partition is loaded again.
        """
        pending = self.pending_txn_offsets.pop(producer_id, None)
        if not pending or not commit:
            return 0
        applied = 0
        for tp, offset in pending.items():
            current = self.offsets.get(tp)
            if current is None or current.written_before(offset):
                self.offsets[tp] = offset
                applied += 1
        return applied

    # --- views -----------------------------------------------------------------------------

    def describe(self) -> GroupDescription:
        stable = self.is_(GroupState.STABLE) and self.protocol_name is not None
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                metadata=m.metadata_for(self.protocol_name) if stable else b"",  # type: ignore[arg-type]
                assignment=m.assignment if stable else b"",
            )
            for m in self.members.values()
        )
        return GroupDescription(
            group_id=self.group_id,
            error=ErrorCode.NONE,
            state=str(self.state),
            protocol_type=self.protocol_type or "",
            protocol_name=(self.protocol_name or "") if stable else "",
            members=members,
        )
