"""SyncGroup: members collect their share of the leader's assignment.

After a join phase every member sends SyncGroup; followers are parked until
the leader's arrives with the assignment. The assignment is written to
``__consumer_offsets`` before anyone hears of it, then every parked member
is answered with its share and the group is Stable. The coordinator never
computes an assignment itself. A SyncGroup during Stable gets the stored
share at once.
"""

from __future__ import annotations

from typing import Mapping

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.heartbeat import Heartbeats
from broker_core.coordinator.group.member import SyncCallback
from broker_core.coordinator.group.rebalance import Rebalancer
from broker_core.coordinator.group.results import SyncGroupResult
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode

E = ErrorCode
S = GroupState


class GroupSync:
    def __init__(
        self, groups: GroupMetadataManager, scheduler: Scheduler, heartbeats: Heartbeats, rebalancer: Rebalancer
    ) -> None:
        self._groups = groups
        self._scheduler = scheduler
        self._heartbeats = heartbeats
        self._rebalancer = rebalancer

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
            error = self._refusal(group, generation_id, member_id, group_instance_id, protocol_type, protocol_name)
        if error is not E.NONE or group is None:
            respond(SyncGroupResult(error))
            return
        member = group.get_member(member_id)
        group.pending_sync_members.discard(member_id)
        self._heartbeats.keep_alive(group, member)
        if group.is_(S.STABLE):
            respond(SyncGroupResult(E.NONE, member.assignment, group.protocol_type, group.protocol_name))
            return
        previous = member.take_sync_callback()
        if previous is not None:
            previous(SyncGroupResult(E.REBALANCE_IN_PROGRESS))
        member.sync_callback = respond
        if group.is_leader(member_id):
            self._apply_leader_assignment(group, assignments)

    @staticmethod
    def _refusal(
        group: GroupMetadata | None,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> ErrorCode:
        """Why this SyncGroup cannot be taken (Kafka's checks, in Kafka's order), or NONE."""
        if group is None:
            return E.UNKNOWN_MEMBER_ID
        if group.is_(S.DEAD):
            return E.COORDINATOR_NOT_AVAILABLE
        if group.is_static_member_fenced(group_instance_id, member_id):
            return E.FENCED_INSTANCE_ID
        if not group.has_member(member_id):
            return E.UNKNOWN_MEMBER_ID
        if generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
            protocol_name is not None and protocol_name != group.protocol_name
        ):
            return E.INCONSISTENT_GROUP_PROTOCOL
        if group.is_(S.EMPTY):
            return E.UNKNOWN_MEMBER_ID
        if group.is_(S.PREPARING_REBALANCE):
            return E.REBALANCE_IN_PROGRESS
        return E.NONE

    def _apply_leader_assignment(self, group: GroupMetadata, assignments: Mapping[str, bytes]) -> None:
        # Members the leader left out get an empty assignment; ids it made up are ignored.
        complete = {m.member_id: bytes(assignments.get(m.member_id, b"")) for m in group}
        error = self._groups.store_group(group, complete)
        if error is not E.NONE:
            self._rebalancer.propagate_assignment_error(group, error)
            self._rebalancer.maybe_prepare_rebalance(group, f"storing the assignment failed: {error.name}")
            return
        group.transition_to(S.STABLE, self._scheduler.now_ms())
        for member in group:
            member.assignment = complete[member.member_id]
            respond = member.take_sync_callback()
            if respond is not None:
                respond(SyncGroupResult(E.NONE, member.assignment, group.protocol_type, group.protocol_name))
                self._heartbeats.keep_alive(group, member)
