"""Member sessions: the Heartbeat API and the session timer every sign of life renews.

A member is alive while it heartbeats within its session timeout, or while
its JoinGroup or SyncGroup is parked (a parked request is proof of life). A
member that joined for the first time has a fixed, longer deadline instead
(``new_member_join_timeout_ms``), since it cannot heartbeat before its first
JoinGroup answer. When a session runs out, the member has failed: what that
means for its group (removal and a rebalance) is the ``on_member_failure``
callback's to decide.
"""

from __future__ import annotations

import logging
from typing import Callable

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.member import MemberMetadata
from broker_core.coordinator.scheduler import Scheduler
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)

E = ErrorCode
S = GroupState

MemberFailureHandler = Callable[[GroupMetadata, MemberMetadata], None]


class Heartbeats:
    def __init__(
        self, groups: GroupMetadataManager, scheduler: Scheduler, *, on_member_failure: MemberFailureHandler
    ) -> None:
        self._groups = groups
        self._scheduler = scheduler
        self._on_member_failure = on_member_failure

    def heartbeat(
        self, *, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
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

    def keep_group_alive(self, group: GroupMetadata) -> None:
        """A full session for every member (a group just loaded: its members must find this broker)."""
        for member in group:
            self.keep_alive(group, member)

    def _on_session_expired(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.heartbeat_timer = None
        if group.members.get(member.member_id) is not member or self._groups.get_group(group.group_id) is not group:
            return
        if not member.is_new and (member.is_awaiting_join or member.is_awaiting_sync):
            self.keep_alive(group, member)  # a parked request is proof of life
            return
        logger.info("member %s of group %r missed its session timeout; removed", member.member_id, group.group_id)
        self._on_member_failure(group, member)
