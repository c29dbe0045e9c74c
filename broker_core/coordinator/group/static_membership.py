"""Static members (KIP-345): a ``group.instance.id`` keeps its place across a restart.

A JoinGroup with a known instance id and no member id is the same member,
restarted: it takes over the old member id's place (and its assignment and
leadership) under a new member id, and the old member id is fenced
(FENCED_INSTANCE_ID) — its parked requests are answered so at once. While
the group is Stable and the member's protocols still lead to the same
choice, no rebalance is needed: the new member id is stored and the member
goes straight on to SyncGroup.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.heartbeat import Heartbeats
from broker_core.coordinator.group.member import UNKNOWN_MEMBER_ID, JoinRequest, MemberMetadata, Protocol
from broker_core.coordinator.group.rebalance import Rebalancer
from broker_core.coordinator.group.results import JoinGroupResult, SyncGroupResult
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState


@dataclass(frozen=True)
class _MemberSettings:
    """What a rejoining static member may change, kept to undo a replacement that could not be stored."""

    protocols: tuple[Protocol, ...]
    rebalance_timeout_ms: int
    session_timeout_ms: int
    client_id: str
    client_host: str

    @classmethod
    def of(cls, member: MemberMetadata | JoinRequest) -> _MemberSettings:
        return cls(member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms, member.client_id,
                   member.client_host)

    def apply_to(self, group: GroupMetadata, member: MemberMetadata) -> None:
        group.update_protocols(member, self.protocols)
        member.rebalance_timeout_ms = self.rebalance_timeout_ms
        member.session_timeout_ms = self.session_timeout_ms
        member.client_id, member.client_host = self.client_id, self.client_host


class StaticMembership:
    def __init__(self, groups: GroupMetadataManager, heartbeats: Heartbeats, rebalancer: Rebalancer) -> None:
        self._groups = groups
        self._heartbeats = heartbeats
        self._rebalancer = rebalancer

    def replace_member(self, group: GroupMetadata, old_member_id: str, new_member_id: str, join: JoinRequest) -> None:
        """A known ``group.instance.id`` joined without a member id: the same member, restarted."""
        instance_id = join.group_instance_id
        if instance_id is None:
            raise ValueError("only a JoinGroup with a group.instance.id can replace a static member")
        old = group.get_member(old_member_id)
        fenced_join, fenced_sync = group.take_join_callback(old), old.take_sync_callback()
        if fenced_join is not None:
            fenced_join(JoinGroupResult(E.FENCED_INSTANCE_ID, member_id=old_member_id))
        if fenced_sync is not None:
            fenced_sync(SyncGroupResult(E.FENCED_INSTANCE_ID))
        previous_leader = group.leader_id
        saved = _MemberSettings.of(old)
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        _MemberSettings.of(join).apply_to(group, member)
        self._heartbeats.keep_alive(group, member)
        if group.is_(S.STABLE):
            self._rejoin_stable_group(group, member, join, previous_leader, saved, old_member_id)
        elif group.is_(S.COMPLETING_REBALANCE):
            # The leader may be assigning to the old member id right now; start over.
            group.park_join(member, join.respond)
            self._rebalancer.prepare_rebalance(
                group, f"static member {instance_id} rejoined during CompletingRebalance"
            )
        elif group.is_(S.PREPARING_REBALANCE):
            group.park_join(member, join.respond)
        else:
            raise RuntimeError(f"group {group.group_id} has static members in state {group.state}")

    def _rejoin_stable_group(
        self,
        group: GroupMetadata,
        member: MemberMetadata,
        join: JoinRequest,
        previous_leader: str | None,
        saved: _MemberSettings,
        old_member_id: str,
    ) -> None:
        instance_id = join.group_instance_id
        if group.select_protocol() != group.protocol_name:
            group.park_join(member, join.respond)
            self._rebalancer.prepare_rebalance(group, f"static member {instance_id} rejoined with other protocols")
            return
        error = self._groups.store_group(group)
        if error is not E.NONE:
            group.replace_static_member(instance_id, member.member_id, old_member_id)  # type: ignore[arg-type]
            saved.apply_to(group, member)
            join.respond(JoinGroupResult(error, member_id=UNKNOWN_MEMBER_ID))
            return
        logger.info("static member %s of group %r restarted as %s; no rebalance needed",
                    instance_id, group.group_id, member.member_id)
        # The previous leader id is returned on purpose: a restarted static
        # leader then acts as a follower and does not reassign the group.
        join.respond(
            JoinGroupResult(
                E.NONE,
                member_id=member.member_id,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader_id=previous_leader or "",
            )
        )
