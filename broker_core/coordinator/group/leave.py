"""LeaveGroup: members leave by member id, or by instance id (a static member, KIP-345).

A member that leaves is removed at once (a parked request of its is
answered) and the rest of the group rebalances. A member id handed out with
MEMBER_ID_REQUIRED but never used may be withdrawn the same way. Each member
named gets its own answer; the request fails as a whole only when the group
cannot be served here.
"""

from __future__ import annotations

import logging
from typing import Sequence

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.member import UNKNOWN_MEMBER_ID
from broker_core.coordinator.group.rebalance import Rebalancer
from broker_core.coordinator.group.results import LeaveGroupResult, MemberIdentity, MemberLeaveResult
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState


class GroupLeave:
    def __init__(self, groups: GroupMetadataManager, rebalancer: Rebalancer) -> None:
        self._groups = groups
        self._rebalancer = rebalancer

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
        return LeaveGroupResult(
            E.NONE,
            tuple(MemberLeaveResult(m.member_id, m.group_instance_id, self._leave(group, m)) for m in members),
        )

    def _leave(self, group: GroupMetadata, identity: MemberIdentity) -> ErrorCode:
        if identity.group_instance_id is not None:
            registered = group.static_member_id(identity.group_instance_id)
            if registered is None:
                return E.UNKNOWN_MEMBER_ID
            if identity.member_id not in (UNKNOWN_MEMBER_ID, registered):
                return E.FENCED_INSTANCE_ID
            member_id = registered
        else:
            member_id = identity.member_id
            if self._rebalancer.withdraw_pending_member(group, member_id):
                return E.NONE
        member = group.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        logger.info("member %s left group %r", member_id, group.group_id)
        self._rebalancer.remove_member_and_update_group(group, member)
        return E.NONE
