"""The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, and rebalances.

A rebalance runs in two phases, as in Kafka's classic coordinator:

1. *PreparingRebalance*: every member must (re)send JoinGroup. Each JoinGroup
   is parked (its ``respond`` callback kept) until all known members have
   rejoined or the rebalance timeout (the largest of the members') passes;
   members that did not rejoin by then are dropped (static members are kept
   until their session expires). A group that was Empty first waits
   ``group.initial.rebalance.delay.ms``, extended while new members keep
   arriving, so a starting fleet forms one generation instead of many.
2. *CompletingRebalance*: the generation id goes up, the protocol all
   members support and most prefer is chosen, and every parked JoinGroup is
   answered; the leader's answer lists all members' metadata. The leader's
   SyncGroup brings the assignment, which is written to
   ``__consumer_offsets`` before any member's SyncGroup is answered with
   its share; the group is then *Stable*. The coordinator never computes an
   assignment itself.

A member is alive while it heartbeats within its session timeout, or while
its JoinGroup/SyncGroup is parked. Static members (``group.instance.id``)
keep their assignment across a restart: a JoinGroup with a known instance id
and no member id takes over the old member id's place without a rebalance
while the group is Stable, and the old member id is fenced
(FENCED_INSTANCE_ID).

Every ``respond`` callback is called exactly once: with the result, with an
error when the member is removed or replaced, or with NOT_COORDINATOR at
shutdown. Everything runs on one thread (the broker's event loop), so there
are no locks; timers come from the injected scheduler.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.member import JoinCallback, MemberMetadata, Protocol, SyncCallback
from broker_core.coordinator.group.results import (
    JoinGroupResult,
    LeaveGroupResult,
    MemberIdentity,
    MemberLeaveResult,
    SyncGroupResult,
)
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState
UNKNOWN_MEMBER_ID = ""


class RebalanceProtocol:
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup over the groups of one coordinator."""

    def __init__(
        self,
        config: GroupConfig,
        groups: GroupMetadataManager,
        scheduler: Scheduler,
        *,
        member_id_suffix: Callable[[], str],
    ) -> None:
        self._config = config
        self._groups = groups
        self._scheduler = scheduler
        self._member_id_suffix = member_id_suffix

    def _now(self) -> int:
        return self._scheduler.now_ms()

    def on_group_loaded(self, group: GroupMetadata) -> None:
        # Loaded members get a full session to find this broker and heartbeat again.
        for member in group:
            self.keep_alive(group, member)

    def shutdown(self) -> None:
        """Answer every parked request with NOT_COORDINATOR and cancel every timer."""
        for group in self._groups.groups():
            self.cancel_timers(group)
            for member in group:
                member.cancel_heartbeat()
                join = member.take_join_callback()
                if join is not None:
                    join(JoinGroupResult(E.NOT_COORDINATOR, member_id=member.member_id))
                sync = member.take_sync_callback()
                if sync is not None:
                    sync(SyncGroupResult(E.NOT_COORDINATOR))

    # --- JoinGroup -------------------------------------------------------------------------

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
            group = self._groups.add_group(GroupMetadata(group_id, now_ms=self._now()))
        join = _JoinRequest(
            member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms, session_timeout_ms,
            protocol_type, tuple(protocols), respond,
        )
        if group.is_(S.DEAD):
            # Removed under this request's feet: the client should find the coordinator again.
            respond(JoinGroupResult(E.COORDINATOR_NOT_AVAILABLE, member_id=member_id))
        elif not self._accepts_joining_member(group, member_id, group_instance_id):
            respond(JoinGroupResult(E.GROUP_MAX_SIZE_REACHED, member_id=member_id))
        elif not group.supports_protocols(protocol_type, {p.name for p in protocols}):
            respond(JoinGroupResult(E.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
        elif is_unknown:
            self._join_new_member(group, join, require_known_member_id)
        else:
            self._join_current_member(group, join)
        if group.is_(S.PREPARING_REBALANCE):
            self._maybe_complete_join(group)
        elif group.is_(S.EMPTY) and group.generation_id == 0 and not (group.has_offsets or group.pending_members):
            # A refused first join leaves nothing behind (ListGroups would otherwise show it).
            self._groups.remove_group(group)

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

    def _join_new_member(self, group: GroupMetadata, join: _JoinRequest, require_known_member_id: bool) -> None:
        new_member_id = f"{join.group_instance_id or join.client_id}-{self._member_id_suffix()}"
        if join.group_instance_id is not None:
            old_member_id = group.static_member_id(join.group_instance_id)
            if old_member_id is not None:
                self._replace_static_member(group, old_member_id, new_member_id, join)
            else:
                self._add_member_and_rebalance(group, new_member_id, join)
        elif require_known_member_id:
            # JoinGroup v4+: hand out the id first, so a client that times out
            # and retries does not leave a stray member behind.
            group.pending_members[new_member_id] = self._scheduler.call_later(
                join.session_timeout_ms, lambda: self._expire_pending_member(group, new_member_id)
            )
            join.respond(JoinGroupResult(E.MEMBER_ID_REQUIRED, member_id=new_member_id))
        else:
            self._add_member_and_rebalance(group, new_member_id, join)

    def _join_current_member(self, group: GroupMetadata, join: _JoinRequest) -> None:
        member_id = join.member_id
        if member_id in group.pending_members:
            timer = group.pending_members.pop(member_id)
            if timer is not None:
                timer.cancel()
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
            self.keep_alive(group, member)
            join.respond(self._current_generation(group, member_id, with_members=group.is_leader(member_id)))
        elif group.is_(S.STABLE) and unchanged and not group.is_leader(member_id):
            # A follower with nothing new: let it go straight on to SyncGroup.
            self.keep_alive(group, member)
            join.respond(self._current_generation(group, member_id, with_members=False))
        else:
            self._update_member_and_rebalance(group, member, join)

    def _current_generation(self, group: GroupMetadata, member_id: str, *, with_members: bool) -> JoinGroupResult:
        return JoinGroupResult(
            E.NONE,
            member_id=member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=group.leader_id or "",
            members=group.current_member_metadata() if with_members else (),
        )

    def _add_member_and_rebalance(self, group: GroupMetadata, member_id: str, join: _JoinRequest) -> None:
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
        self.keep_alive(group, member, self._config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group, f"member {member_id} joined")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, join: _JoinRequest) -> None:
        member.protocols = join.protocols
        member.rebalance_timeout_ms = join.rebalance_timeout_ms
        member.session_timeout_ms = join.session_timeout_ms
        self._park_join(member, join.respond)
        self._maybe_prepare_rebalance(group, f"member {member.member_id} rejoined in state {group.state}")

    def _park_join(self, member: MemberMetadata, respond: JoinCallback) -> None:
        previous = member.take_join_callback()
        if previous is not None:
            # Only one JoinGroup per member can wait; the older one is superseded.
            previous(JoinGroupResult(E.REBALANCE_IN_PROGRESS, member_id=member.member_id))
        member.join_callback = respond

    def _replace_static_member(self, group: GroupMetadata, old_member_id: str, new_member_id: str, join: _JoinRequest) -> None:
        """A known ``group.instance.id`` joined without a member id: the same member, restarted."""
        instance_id = join.group_instance_id
        if instance_id is None:
            raise ValueError("only a JoinGroup with a group.instance.id can replace a static member")
        old = group.get_member(old_member_id)
        fenced_join, fenced_sync = old.take_join_callback(), old.take_sync_callback()
        if fenced_join is not None:
            fenced_join(JoinGroupResult(E.FENCED_INSTANCE_ID, member_id=old_member_id))
        if fenced_sync is not None:
            fenced_sync(SyncGroupResult(E.FENCED_INSTANCE_ID))
        previous_leader = group.leader_id
        saved = (old.protocols, old.rebalance_timeout_ms, old.session_timeout_ms, old.client_id, old.client_host)
        member = group.replace_static_member(instance_id, old_member_id, new_member_id)
        member.protocols = join.protocols
        member.rebalance_timeout_ms = join.rebalance_timeout_ms
        member.session_timeout_ms = join.session_timeout_ms
        member.client_id, member.client_host = join.client_id, join.client_host
        self.keep_alive(group, member)
        if group.is_(S.STABLE):
            if group.select_protocol() != group.protocol_name:
                member.join_callback = join.respond
                self._prepare_rebalance(group, f"static member {instance_id} rejoined with other protocols")
                return
            error = self._groups.store_group(group)
            if error is not E.NONE:
                group.replace_static_member(instance_id, new_member_id, old_member_id)
                (member.protocols, member.rebalance_timeout_ms, member.session_timeout_ms,
                 member.client_id, member.client_host) = saved
                join.respond(JoinGroupResult(error, member_id=UNKNOWN_MEMBER_ID))
                return
            logger.info("static member %s of group %r restarted as %s; no rebalance needed",
                        instance_id, group.group_id, new_member_id)
            # The previous leader id is returned on purpose: a restarted static
            # leader then acts as a follower and does not reassign the group.
            join.respond(
                JoinGroupResult(
                    E.NONE,
                    member_id=new_member_id,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader_id=previous_leader or "",
                )
            )
        elif group.is_(S.COMPLETING_REBALANCE):
            # The leader may be assigning to the old member id right now; start over.
            member.join_callback = join.respond
            self._prepare_rebalance(group, f"static member {instance_id} rejoined during CompletingRebalance")
        elif group.is_(S.PREPARING_REBALANCE):
            member.join_callback = join.respond
        else:
            raise RuntimeError(f"group {group.group_id} has static members in state {group.state}")

    # --- rebalance phases ------------------------------------------------------------------

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.can_rebalance:
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(S.COMPLETING_REBALANCE):
            self._propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None
        group.pending_sync_members.clear()
        was_empty = group.is_(S.EMPTY)
        group.transition_to(S.PREPARING_REBALANCE, self._now())
        logger.info("preparing to rebalance group %r in generation %d: %s", group.group_id, group.generation_id, reason)
        if was_empty:
            delay = self._config.initial_rebalance_delay_ms
            self._schedule_initial_join(group, delay, max(group.rebalance_timeout_ms - delay, 0))
        else:
            self._schedule_join_deadline(group)
            self._maybe_complete_join(group)

    def _schedule_initial_join(self, group: GroupMetadata, delay_ms: int, remaining_ms: int) -> None:
        self._cancel_join_timer(group)
        group.join_timer_is_initial_delay = True
        group.join_timer = self._scheduler.call_later(
            delay_ms, lambda: self._on_initial_join_delay(group, delay_ms, remaining_ms)
        )

    def _on_initial_join_delay(self, group: GroupMetadata, delay_ms: int, remaining_ms: int) -> None:
        group.join_timer = None
        if not group.is_(S.PREPARING_REBALANCE) or self._groups.get_group(group.group_id) is not group:
            return
        if group.new_member_added and remaining_ms > 0:
            group.new_member_added = False
            next_delay = min(self._config.initial_rebalance_delay_ms, remaining_ms)
            self._schedule_initial_join(group, next_delay, max(remaining_ms - delay_ms, 0))
        else:
            self._complete_join(group)

    def _schedule_join_deadline(self, group: GroupMetadata) -> None:
        self._cancel_join_timer(group)
        group.join_timer_is_initial_delay = False
        group.join_timer = self._scheduler.call_later(group.rebalance_timeout_ms, lambda: self._on_join_deadline(group))

    def _on_join_deadline(self, group: GroupMetadata) -> None:
        group.join_timer = None
        if group.is_(S.PREPARING_REBALANCE) and self._groups.get_group(group.group_id) is group:
            self._complete_join(group)

    def _maybe_complete_join(self, group: GroupMetadata) -> None:
        """Finish the join phase early once every member has rejoined (not during the initial delay)."""
        if (
            group.is_(S.PREPARING_REBALANCE)
            and not group.join_timer_is_initial_delay
            and group.has_all_members_joined
        ):
            self._complete_join(group)

    def _cancel_join_timer(self, group: GroupMetadata) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None

    def _complete_join(self, group: GroupMetadata) -> None:
        self._cancel_join_timer(group)
        group.join_timer_is_initial_delay = False
        for member in group.not_yet_rejoined_members():
            if not member.is_static:
                logger.info("member %s of group %r did not rejoin in time; removed", member.member_id, group.group_id)
                self._remove_member(group, member, E.UNKNOWN_MEMBER_ID)
        if group.is_(S.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and len(group) > 0:
            # Only static members that have not rejoined remain: wait for them or their session expiry.
            logger.warning("no member of group %r rejoined; waiting another rebalance timeout", group.group_id)
            self._schedule_join_deadline(group)
            return
        group.init_next_generation(self._now())
        if group.is_(S.EMPTY):
            logger.info("group %r is empty in generation %d", group.group_id, group.generation_id)
            error = self._groups.store_group(group)
            if error is not E.NONE:
                # Harmless: an empty generation has no members to confuse if the old one comes back.
                logger.warning("could not store empty group %r: %s", group.group_id, error.name)
            return
        logger.info(
            "group %r stabilized in generation %d with %d member(s), protocol %s",
            group.group_id, group.generation_id, len(group), group.protocol_name,
        )
        leader_view = group.current_member_metadata()
        for member in group:
            respond = member.take_join_callback()
            is_leader = group.is_leader(member.member_id)
            if respond is not None:
                respond(
                    JoinGroupResult(
                        E.NONE,
                        member_id=member.member_id,
                        generation_id=group.generation_id,
                        protocol_type=group.protocol_type,
                        protocol_name=group.protocol_name,
                        leader_id=group.leader_id or "",
                        members=leader_view if is_leader else (),
                    )
                )
            member.is_new = False
            self.keep_alive(group, member)
            group.pending_sync_members.add(member.member_id)
        generation = group.generation_id
        group.sync_timer = self._scheduler.call_later(
            group.rebalance_timeout_ms, lambda: self._on_pending_sync_expired(group, generation)
        )

    def _on_pending_sync_expired(self, group: GroupMetadata, generation: int) -> None:
        group.sync_timer = None
        if generation != group.generation_id or self._groups.get_group(group.group_id) is not group:
            return
        if group.state in (S.COMPLETING_REBALANCE, S.STABLE) and group.pending_sync_members:
            for member_id in list(group.pending_sync_members):
                member = group.members.get(member_id)
                if member is not None:
                    logger.info("member %s of group %r never sent SyncGroup; removed", member_id, group.group_id)
                    self._remove_member(group, member, E.UNKNOWN_MEMBER_ID)
            if group.can_rebalance:
                self._prepare_rebalance(group, "members did not sync in time")

    def _propagate_assignment_error(self, group: GroupMetadata, error: ErrorCode) -> None:
        for member in group:
            member.assignment = b""
            respond = member.take_sync_callback()
            if respond is not None:
                respond(SyncGroupResult(error))

    # --- SyncGroup -------------------------------------------------------------------------

    def sync_group(
        self,
        *,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        assignments: Mapping[str, bytes],
        respond: SyncCallback,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
    ) -> None:
        """Collect the leader's assignment; ``respond`` gets this member's share."""
        error = self._groups.check(group_id, allow_empty_id=False)
        group = self._groups.get_group(group_id) if error is E.NONE else None
        if error is E.NONE:
            if group is None:
                error = E.UNKNOWN_MEMBER_ID
            elif group.is_(S.DEAD):
                error = E.COORDINATOR_NOT_AVAILABLE
            elif group.is_static_member_fenced(group_instance_id, member_id):
                error = E.FENCED_INSTANCE_ID
            elif not group.has_member(member_id):
                error = E.UNKNOWN_MEMBER_ID
            elif generation_id != group.generation_id:
                error = E.ILLEGAL_GENERATION
            elif (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name
            ):
                error = E.INCONSISTENT_GROUP_PROTOCOL
            elif group.is_(S.EMPTY):
                error = E.UNKNOWN_MEMBER_ID
            elif group.is_(S.PREPARING_REBALANCE):
                error = E.REBALANCE_IN_PROGRESS
        if error is not E.NONE or group is None:
            respond(SyncGroupResult(error))
            return
        member = group.get_member(member_id)
        group.pending_sync_members.discard(member_id)
        self.keep_alive(group, member)
        if group.is_(S.STABLE):
            respond(SyncGroupResult(E.NONE, member.assignment, group.protocol_type, group.protocol_name))
            return
        previous = member.take_sync_callback()
        if previous is not None:
            previous(SyncGroupResult(E.REBALANCE_IN_PROGRESS))
        member.sync_callback = respond
        if group.is_leader(member_id):
            self._apply_leader_assignment(group, assignments)

    def _apply_leader_assignment(self, group: GroupMetadata, assignments: Mapping[str, bytes]) -> None:
        # Members the leader left out get an empty assignment; ids it made up are ignored.
        complete = {m.member_id: bytes(assignments.get(m.member_id, b"")) for m in group}
        error = self._groups.store_group(group, complete)
        if error is not E.NONE:
            self._propagate_assignment_error(group, error)
            self._maybe_prepare_rebalance(group, f"storing the assignment failed: {error.name}")
            return
        group.transition_to(S.STABLE, self._now())
        for member in group:
            member.assignment = complete[member.member_id]
            respond = member.take_sync_callback()
            if respond is not None:
                respond(SyncGroupResult(E.NONE, member.assignment, group.protocol_type, group.protocol_name))
                self.keep_alive(group, member)

    # --- Heartbeat -------------------------------------------------------------------------

    def heartbeat(self, *, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> ErrorCode:
        error = self._groups.check(group_id, allow_empty_id=False)
        if error is E.COORDINATOR_LOAD_IN_PROGRESS:
            return E.NONE  # the member cannot be judged yet; its session continues after the load
        if error is not E.NONE:
            return error
        group = self._groups.get_group(group_id)
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        if group.is_(S.DEAD):
            return E.COORDINATOR_NOT_AVAILABLE
        if group.is_static_member_fenced(group_instance_id, member_id):
            return E.FENCED_INSTANCE_ID
        if not group.has_member(member_id) or group.is_(S.EMPTY):
            return E.UNKNOWN_MEMBER_ID
        if generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        self.keep_alive(group, group.get_member(member_id))
        return E.REBALANCE_IN_PROGRESS if group.is_(S.PREPARING_REBALANCE) else E.NONE

    def keep_alive(self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int | None = None) -> None:
        """Start the member's session afresh (a heartbeat, or any request that proves it is alive)."""
        member.cancel_heartbeat()
        delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
        member.heartbeat_timer = self._scheduler.call_later(delay, lambda: self._on_session_expired(group, member))

    def _on_session_expired(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.heartbeat_timer = None
        if group.members.get(member.member_id) is not member or self._groups.get_group(group.group_id) is not group:
            return
        if not member.is_new and (member.is_awaiting_join or member.is_awaiting_sync):
            self.keep_alive(group, member)  # a parked request is proof of life
            return
        logger.info("member %s of group %r missed its session timeout; removed", member.member_id, group.group_id)
        self._remove_member_and_update_group(group, member)

    def _expire_pending_member(self, group: GroupMetadata, member_id: str) -> None:
        if group.pending_members.pop(member_id, False) is False:
            return
        if group.is_(S.PREPARING_REBALANCE):
            self._maybe_complete_join(group)

    # --- LeaveGroup ------------------------------------------------------------------------

    def leave_group(self, *, group_id: str, members: Sequence[MemberIdentity]) -> LeaveGroupResult:
        error = self._groups.check(group_id, allow_empty_id=False)
        if error is not E.NONE:
            return LeaveGroupResult(error)
        group = self._groups.get_group(group_id)
        if group is None:
            return LeaveGroupResult(
                E.NONE, tuple(MemberLeaveResult(m.member_id, m.group_instance_id, E.UNKNOWN_MEMBER_ID) for m in members)
            )
        if group.is_(S.DEAD):
            return LeaveGroupResult(E.COORDINATOR_NOT_AVAILABLE)
        return LeaveGroupResult(E.NONE, tuple(self._leave(group, identity) for identity in members))

    def _leave(self, group: GroupMetadata, identity: MemberIdentity) -> MemberLeaveResult:
        def result(error: ErrorCode) -> MemberLeaveResult:
            return MemberLeaveResult(identity.member_id, identity.group_instance_id, error)

        if identity.group_instance_id is not None:
            registered = group.static_member_id(identity.group_instance_id)
            if registered is None:
                return result(E.UNKNOWN_MEMBER_ID)
            if identity.member_id not in (UNKNOWN_MEMBER_ID, registered):
                return result(E.FENCED_INSTANCE_ID)
            member_id = registered
        else:
            member_id = identity.member_id
            if member_id in group.pending_members:
                timer = group.pending_members.pop(member_id)
                if timer is not None:
                    timer.cancel()
                if group.is_(S.PREPARING_REBALANCE):
                    self._maybe_complete_join(group)
                return result(E.NONE)
        member = group.members.get(member_id)
        if member is None:
            return result(E.UNKNOWN_MEMBER_ID)
        logger.info("member %s left group %r", member_id, group.group_id)
        self._remove_member_and_update_group(group, member)
        return result(E.NONE)

    def _remove_member(self, group: GroupMetadata, member: MemberMetadata, error: ErrorCode) -> None:
        """Drop a member, answering whatever request of its is still parked."""
        join = member.take_join_callback()
        if join is not None:
            join(JoinGroupResult(error, member_id=UNKNOWN_MEMBER_ID))
        sync = member.take_sync_callback()
        if sync is not None:
            sync(SyncGroupResult(error))
        group.remove_member(member.member_id)

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self._remove_member(group, member, E.UNKNOWN_MEMBER_ID)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance(group, f"member {member.member_id} left")
        elif group.is_(S.PREPARING_REBALANCE):
            self._maybe_complete_join(group)

    def cancel_timers(self, group: GroupMetadata) -> None:
        """Stop the group's rebalance timers (the group is going away)."""
        self._cancel_join_timer(group)
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None
        for timer in group.pending_members.values():
            if timer is not None:
                timer.cancel()


@dataclass(frozen=True, slots=True)
class _JoinRequest:
    """The parts of one JoinGroup the protocol carries between its steps."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    respond: JoinCallback
