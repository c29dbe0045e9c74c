"""JoinGroup: a member joins, rejoins or comes back, and is parked until the join phase completes.

* A member without an id gets one: at once before JoinGroup v4; from v4 it
  is first answered MEMBER_ID_REQUIRED with the id, so a client that times
  out and retries does not leave a stray member behind. A known static
  member takes its old place (:mod:`static_membership`).
* A known member rejoining starts a rebalance, unless nothing changed: a
  retry during CompletingRebalance, or a follower during Stable, is answered
  with the current generation at once.
* A new member, or one that changed its protocols, starts a rebalance
  (:mod:`rebalance`); its request waits there.

Refusals, in Kafka's order: not the coordinator or still loading, bad
session timeout, unknown member id, group removed meanwhile, group full,
no protocol in common.
"""

from __future__ import annotations

from typing import Callable, Sequence

from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.heartbeat import Heartbeats
from broker_core.coordinator.group.member import (
    UNKNOWN_MEMBER_ID,
    JoinCallback,
    JoinRequest,
    MemberMetadata,
    Protocol,
)
from broker_core.coordinator.group.rebalance import Rebalancer
from broker_core.coordinator.group.results import JoinGroupResult
from broker_core.coordinator.group.static_membership import StaticMembership
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode

E = ErrorCode
S = GroupState


class GroupJoin:
    def __init__(
        self,
        config: GroupConfig,
        groups: GroupMetadataManager,
        scheduler: Scheduler,
        heartbeats: Heartbeats,
        rebalancer: Rebalancer,
        *,
        member_id_suffix: Callable[[], str],
    ) -> None:
        self._config = config
        self._groups = groups
        self._scheduler = scheduler
        self._heartbeats = heartbeats
        self._rebalancer = rebalancer
        self._static = StaticMembership(groups, heartbeats, rebalancer)
        self._member_id_suffix = member_id_suffix

    def join_group(
        self,
        *,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[Protocol],
        require_known_member_id: bool,
        respond: JoinCallback,
    ) -> None:
        """Join (or rejoin) a group; ``respond`` is called when the join phase completes."""
        error = self._groups.check(group_id, allow_empty_id=False)
        if error is E.NONE and not (
            self._config.min_session_timeout_ms <= session_timeout_ms <= self._config.max_session_timeout_ms
        ):
            error = E.INVALID_SESSION_TIMEOUT
        if error is not E.NONE:
            respond(JoinGroupResult(error, member_id=member_id))
            return
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms  # JoinGroup v0 has none
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self._groups.get_group(group_id)
        if group is None:
            if not is_unknown:
                respond(JoinGroupResult(E.UNKNOWN_MEMBER_ID, member_id=member_id))
                return
            group = self._groups.add_group(GroupMetadata(group_id, now_ms=self._scheduler.now_ms()))
        join = JoinRequest(
            member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms, session_timeout_ms,
            protocol_type, tuple(protocols), respond,
        )
        self._join(group, join, require_known_member_id)
        if group.is_(S.PREPARING_REBALANCE):
            self._rebalancer.maybe_complete_join(group)
        elif group.is_(S.EMPTY) and group.generation_id == 0 and not (group.has_offsets or group.pending_members):
            # A refused first join leaves nothing behind (ListGroups would otherwise show it).
            self._groups.remove_group(group)

    def _join(self, group: GroupMetadata, join: JoinRequest, require_known_member_id: bool) -> None:
        if group.is_(S.DEAD):
            # Removed under this request's feet: the client should find the coordinator again.
            join.respond(JoinGroupResult(E.COORDINATOR_NOT_AVAILABLE, member_id=join.member_id))
        elif not self._accepts_joining_member(group, join.member_id, join.group_instance_id):
            join.respond(JoinGroupResult(E.GROUP_MAX_SIZE_REACHED, member_id=join.member_id))
        elif not group.supports_protocols(join.protocol_type, {p.name for p in join.protocols}):
            join.respond(JoinGroupResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=join.member_id))
        elif join.member_id == UNKNOWN_MEMBER_ID:
            self._join_new_member(group, join, require_known_member_id)
        else:
            self._join_current_member(group, join)

    def _accepts_joining_member(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> bool:
        limit = self._config.max_group_size
        if group.state in (S.EMPTY, S.DEAD):
            return True
        if group.static_member_id(instance_id) is not None:
            return True  # a static member coming back takes its own place
        if group.is_(S.PREPARING_REBALANCE):
            # Counting members that have rejoined lets the last ones to rejoin a shrunken limit be refused.
            known = group.members.get(member_id)
            return (known is not None and known.is_awaiting_join) or group.awaiting_join_count < limit
        return group.has_member(member_id) or len(group) < limit

    def _join_new_member(self, group: GroupMetadata, join: JoinRequest, require_known_member_id: bool) -> None:
        new_member_id = f"{join.group_instance_id or join.client_id}-{self._member_id_suffix()}"
        if join.group_instance_id is not None:
            old_member_id = group.static_member_id(join.group_instance_id)
            if old_member_id is not None:
                self._static.replace_member(group, old_member_id, new_member_id, join)
            else:
                self._add_member_and_rebalance(group, new_member_id, join)
        elif require_known_member_id:
            # JoinGroup v4+: hand out the id first, so a client that times out
            # and retries does not leave a stray member behind.
            group.pending_members[new_member_id] = self._scheduler.call_later(
                join.session_timeout_ms, lambda: self._rebalancer.withdraw_pending_member(group, new_member_id)
            )
            join.respond(JoinGroupResult(E.MEMBER_ID_REQUIRED, member_id=new_member_id))
        else:
            self._add_member_and_rebalance(group, new_member_id, join)

    def _join_current_member(self, group: GroupMetadata, join: JoinRequest) -> None:
        member_id = join.member_id
        if group.withdraw_pending_member(member_id):
            self._add_member_and_rebalance(group, member_id, join)
            return
        if group.is_static_member_fenced(join.group_instance_id, member_id):
            join.respond(JoinGroupResult(E.FENCED_INSTANCE_ID, member_id=member_id))
            return
        member = group.members.get(member_id)
        if member is None or group.state in (S.EMPTY, S.DEAD):
            join.respond(JoinGroupResult(E.UNKNOWN_MEMBER_ID, member_id=member_id))
            return
        unchanged = member.has_same_protocols(join.protocols)
        if group.is_(S.COMPLETING_REBALANCE) and unchanged:
            # A retried JoinGroup: answer with the generation just formed.
            self._heartbeats.keep_alive(group, member)
            join.respond(group.current_generation(member_id, with_members=group.is_leader(member_id)))
        elif group.is_(S.STABLE) and unchanged and not group.is_leader(member_id):
            # A follower with nothing new: let it go straight on to SyncGroup.
            self._heartbeats.keep_alive(group, member)
            join.respond(group.current_generation(member_id, with_members=False))
        else:
            self._update_member_and_rebalance(group, member, join)

    def _add_member_and_rebalance(self, group: GroupMetadata, member_id: str, join: JoinRequest) -> None:
        member = MemberMetadata(
            member_id=member_id,
            group_instance_id=join.group_instance_id,
            client_id=join.client_id,
            client_host=join.client_host,
            rebalance_timeout_ms=join.rebalance_timeout_ms,
            session_timeout_ms=join.session_timeout_ms,
            protocol_type=join.protocol_type,
            protocols=join.protocols,
            is_new=True,
            join_callback=join.respond,
        )
        group.add_member(member)
        if group.is_(S.PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        # A new member cannot heartbeat before its first JoinGroup response, so it
        # gets a long fixed deadline instead of its session timeout.
        self._heartbeats.keep_alive(group, member, self._config.new_member_join_timeout_ms)
        self._rebalancer.maybe_prepare_rebalance(group, f"member {member_id} joined")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, join: JoinRequest) -> None:
        group.update_protocols(member, join.protocols)
        member.rebalance_timeout_ms = join.rebalance_timeout_ms
        member.session_timeout_ms = join.session_timeout_ms
        previous = group.park_join(member, join.respond)
        if previous is not None:
            # Only one JoinGroup per member can wait; the older one is superseded.
            previous(JoinGroupResult(E.REBALANCE_IN_PROGRESS, member_id=member.member_id))
        self._rebalancer.maybe_prepare_rebalance(group, f"member {member.member_id} rejoined in state {group.state}")
