"""The two phases of a classic rebalance, and members leaving in the middle of one.

1. *PreparingRebalance*: every member must (re)send JoinGroup. Each JoinGroup
   is parked (its ``respond`` callback kept) until all known members have
   rejoined or the join phase times out (see :mod:`rebalance_timers`);
   members that did not rejoin by then are dropped, except static members,
   which are kept until their session expires.
2. *CompletingRebalance*: the generation id goes up, the protocol all
   members support and most prefer is chosen, and every parked JoinGroup is
   answered; the leader's answer lists all members' metadata. SyncGroup
   (:mod:`sync`) then brings the leader's assignment and makes the group
   *Stable*; members that never sync are dropped after the rebalance timeout.

A member removed while a request of its is parked gets that request
answered with the error that removed it, so every ``respond`` callback is
called exactly once.
"""

from __future__ import annotations

import logging

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.heartbeat import Heartbeats
from broker_core.coordinator.group.member import UNKNOWN_MEMBER_ID, MemberMetadata
from broker_core.coordinator.group.rebalance_timers import RebalanceTimers
from broker_core.coordinator.group.results import JoinGroupResult, SyncGroupResult
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState


class Rebalancer:
    def __init__(
        self,
        groups: GroupMetadataManager,
        scheduler: Scheduler,
        heartbeats: Heartbeats,
        timers: RebalanceTimers,
    ) -> None:
        self._groups = groups
        self._scheduler = scheduler
        self._heartbeats = heartbeats
        self._timers = timers

    def _now(self) -> int:
        return self._scheduler.now_ms()

    # --- PreparingRebalance ----------------------------------------------------------------

    def maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.can_rebalance:
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(S.COMPLETING_REBALANCE):
            self.propagate_assignment_error(group, E.REBALANCE_IN_PROGRESS)
        self._timers.cancel_sync(group)
        group.pending_sync_members.clear()
        was_empty = group.is_(S.EMPTY)
        group.transition_to(S.PREPARING_REBALANCE, self._now())
        logger.info("preparing to rebalance group %r in generation %d: %s", group.group_id, group.generation_id, reason)
        if was_empty:
            self._timers.start_initial_delay(group, self.complete_join)
        else:
            self._timers.start_join_deadline(group, self.complete_join)
            self.maybe_complete_join(group)

    def maybe_complete_join(self, group: GroupMetadata) -> None:
        """Finish the join phase early once every member has rejoined (not during the initial delay)."""
        if (
            group.is_(S.PREPARING_REBALANCE)
            and not group.join_timer_is_initial_delay
            and group.has_all_members_joined
        ):
            self.complete_join(group)

    # --- CompletingRebalance ---------------------------------------------------------------

    def complete_join(self, group: GroupMetadata) -> None:
        """Close the join phase: drop who did not rejoin, form the next generation, answer the joins."""
        self._timers.cancel_join(group)
        group.join_timer_is_initial_delay = False
        for member in group.not_yet_rejoined_members():
            if not member.is_static:
                logger.info("member %s of group %r did not rejoin in time; removed", member.member_id, group.group_id)
                self.remove_member(group, member, E.UNKNOWN_MEMBER_ID)
        if group.is_(S.DEAD):
            return
        if not group.maybe_elect_new_joined_leader() and len(group) > 0:
            # Only static members that have not rejoined remain: wait for them or their session expiry.
            logger.warning("no member of group %r rejoined; waiting another rebalance timeout", group.group_id)
            self._timers.start_join_deadline(group, self.complete_join)
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
        self._answer_joins(group)
        self._timers.start_sync_deadline(group, self._on_sync_deadline)

    def _answer_joins(self, group: GroupMetadata) -> None:
        for member in group:
            respond = group.take_join_callback(member)
            if respond is not None:
                respond(group.current_generation(member.member_id, with_members=group.is_leader(member.member_id)))
            member.is_new = False
            self._heartbeats.keep_alive(group, member)
            group.pending_sync_members.add(member.member_id)

    def _on_sync_deadline(self, group: GroupMetadata) -> None:
        if group.state in (S.COMPLETING_REBALANCE, S.STABLE) and group.pending_sync_members:
            for member_id in list(group.pending_sync_members):
                member = group.members.get(member_id)
                if member is not None:
                    logger.info("member %s of group %r never sent SyncGroup; removed", member_id, group.group_id)
                    self.remove_member(group, member, E.UNKNOWN_MEMBER_ID)
            if group.can_rebalance:
                self.prepare_rebalance(group, "members did not sync in time")

    def propagate_assignment_error(self, group: GroupMetadata, error: ErrorCode) -> None:
        """No assignment after all: every parked SyncGroup gets ``error``."""
        for member in group:
            member.assignment = b""
            respond = member.take_sync_callback()
            if respond is not None:
                respond(SyncGroupResult(error))

    # --- members going -----------------------------------------------------------------------

    def remove_member(self, group: GroupMetadata, member: MemberMetadata, error: ErrorCode) -> None:
        """Drop a member, answering whatever request of its is still parked."""
        join = group.take_join_callback(member)
        if join is not None:
            join(JoinGroupResult(error, member_id=UNKNOWN_MEMBER_ID))
        sync = member.take_sync_callback()
        if sync is not None:
            sync(SyncGroupResult(error))
        group.remove_member(member.member_id)

    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """A member left or failed: drop it, then rebalance or let the join phase finish without it."""
        self.remove_member(group, member, E.UNKNOWN_MEMBER_ID)
        if group.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance(group, f"member {member.member_id} left")
        elif group.is_(S.PREPARING_REBALANCE):
            self.maybe_complete_join(group)

    def withdraw_pending_member(self, group: GroupMetadata, member_id: str) -> bool:
        """A member id handed out with MEMBER_ID_REQUIRED will not be used; False if it was not pending."""
        if not group.withdraw_pending_member(member_id):
            return False
        if group.is_(S.PREPARING_REBALANCE):
            self.maybe_complete_join(group)
        return True

    def cancel_timers(self, group: GroupMetadata) -> None:
        """Stop the group's rebalance timers (the group is going away)."""
        self._timers.cancel_all(group)

    def shutdown(self) -> None:
        """Answer every parked request with NOT_COORDINATOR and cancel every timer."""
        for group in self._groups.groups():
            self._stop_serving(group)

    def unload(self, group: GroupMetadata) -> None:
        """The group moved to another coordinator: answer its parked requests, stop its timers, mark it Dead
        (a timer or callback still holding it then leaves it alone)."""
        self._stop_serving(group)
        if not group.is_(S.DEAD):
            group.transition_to(S.DEAD, self._now())

    def _stop_serving(self, group: GroupMetadata) -> None:
        self.cancel_timers(group)
        for member in group:
            member.cancel_heartbeat()
            join = group.take_join_callback(member)
            if join is not None:
                join(JoinGroupResult(E.NOT_COORDINATOR, member_id=member.member_id))
            sync = member.take_sync_callback()
            if sync is not None:
                sync(SyncGroupResult(E.NOT_COORDINATOR))
