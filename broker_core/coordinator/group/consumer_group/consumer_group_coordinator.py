"""Serves ConsumerGroupHeartbeat: membership, epochs, target assignment and reconciliation of consumer groups.

On each heartbeat the member is created, updated or removed; a change of
membership, subscription or the subscribed topics' partition counts bumps the
group epoch; a group whose assignment epoch is behind gets a new target from
its assignor at once; then only this member moves one step towards its target
(``current_assignment_builder``). Members are removed when their session
(``group.consumer.session.timeout.ms``) runs out, or when they hold a
partition to revoke past their rebalance timeout. Runs on the broker's
event loop; timers come from the injected scheduler.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Callable

from broker_core.coordinator.group.consumer_group.assignors import ASSIGNORS, AssignmentSpec
from broker_core.coordinator.group.consumer_group.consumer_group import ConsumerGroup
from broker_core.coordinator.group.consumer_group.consumer_group_config import ConsumerGroupConfig
from broker_core.coordinator.group.consumer_group.consumer_group_log import ConsumerGroupLog, Snapshot
from broker_core.coordinator.group.consumer_group.consumer_group_member import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupMember,
    MemberState,
    as_pairs,
)
from broker_core.coordinator.group.consumer_group.current_assignment_builder import next_member_state
from broker_core.coordinator.group.consumer_group.heartbeat_types import (
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
    TopicsImage,
    failed,
)
from broker_core.coordinator.internal_topic import KeyValue
from broker_core.coordinator.scheduler import Scheduler, TimerHandle
from spate.protocol.errors import ErrorCode

E = ErrorCode
logger = logging.getLogger(__name__)
# (group id, records) -> NONE once written to the group's __consumer_offsets partition, else the error.
RecordWriter = Callable[[str, "list[KeyValue]"], ErrorCode]


def _subscription(member: ConsumerGroupMember) -> tuple[object, ...]:
    """What of a member, when it changes, calls for a new target assignment."""
    return member.subscribed_topics, member.server_assignor, member.rack_id, member.instance_id


def _resolve_regex(member: ConsumerGroupMember, topics: TopicsImage) -> ConsumerGroupMember:
    """The topics the member's regex matches now (whole names, internal topics excluded, as Kafka)."""
    if member.subscribed_topic_regex is None:
        return member.with_changes(regex_topics=()) if member.regex_topics else member
    pattern = re.compile(member.subscribed_topic_regex)
    matched = tuple(sorted(t for t in topics.names() if not t.startswith("__") and pattern.fullmatch(t)))
    return member if matched == member.regex_topics else member.with_changes(regex_topics=matched)


class ConsumerGroupCoordinator:
    def __init__(self, config: ConsumerGroupConfig, scheduler: Scheduler, *,
                 member_id_factory: Callable[[], str] = lambda: str(uuid.uuid4()),
                 log: ConsumerGroupLog | None = None, writer: RecordWriter | None = None) -> None:
        self.config = config
        # Where the groups' records go (the group's __consumer_offsets partition); None keeps them in memory.
        self._log = log
        self._writer = writer
        self._scheduler = scheduler
        self._new_member_id = member_id_factory
        self.groups: dict[str, ConsumerGroup] = {}
        self._sessions: dict[tuple[str, str], TimerHandle] = {}
        self._revocation_timers: dict[tuple[str, str], TimerHandle] = {}

    # --- the heartbeat ---------------------------------------------------------------------

    def heartbeat(self, request: ConsumerHeartbeat, topics: TopicsImage) -> ConsumerHeartbeatResult:
        """Serve one heartbeat, then write what it changed; the member hears of it once it is stored."""
        before = Snapshot.of(self.groups.get(request.group_id))
        result = self._heartbeat(request, topics)
        group = self.groups.get(request.group_id)
        if group is not None:
            error = self._persist(before, group)
            if error is not E.NONE:
                return failed(error, f"Writing the group's records failed: {error.name}.")
        return result

    def _persist(self, before: Snapshot, group: ConsumerGroup) -> ErrorCode:
        if self._log is None or self._writer is None:
            return E.NONE
        records = self._log.changes(before, group)
        return self._writer(group.group_id, records) if records else E.NONE

    def load(self, groups: dict[str, ConsumerGroup]) -> None:
        """Groups read back from __consumer_offsets: each member gets a full session to heartbeat here."""
        for group in groups.values():
            self.drop_group(group.group_id)
            self.groups[group.group_id] = group
            for member in group.members.values():
                self._schedule_session(group, member)

    def unload(self, belongs: Callable[[str], bool]) -> None:
        """This broker stopped coordinating the groups for which ``belongs`` holds."""
        for group_id in [g for g in self.groups if belongs(g)]:
            self.drop_group(group_id)

    def _heartbeat(self, request: ConsumerHeartbeat, topics: TopicsImage) -> ConsumerHeartbeatResult:
        error = self._validate(request)
        if error is not None:
            return error
        group = self.groups.get(request.group_id)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(group, request)
        if group is None:
            group = self.groups[request.group_id] = ConsumerGroup(request.group_id)
        member_or_error = self._member_for(group, request)
        if isinstance(member_or_error, ConsumerHeartbeatResult):
            return member_or_error
        member, previous = member_or_error
        updated = _resolve_regex(self._with_request_fields(member, request), topics)
        if previous is None or _subscription(updated) != _subscription(previous) \
                or self._metadata_changed(group, topics):
            group.group_epoch += 1
            group.subscribed_partition_counts = self._counts(group, updated, topics)
        group.update_member(updated)
        if group.assignment_epoch < group.group_epoch:
            self._assign(group)
        reconciled = next_member_state(updated, group.assignment_epoch, group.target_assignment.get(
            updated.member_id, {}), group.owner_of, request.owned)
        group.update_member(reconciled)
        self._schedule_session(group, reconciled)
        self._watch_revocation(group, reconciled)
        send = (reconciled.assigned_partitions != (previous.assigned_partitions if previous else None)
                or request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
                or (request.owned is not None and as_pairs(request.owned) != as_pairs(reconciled.assigned_partitions)))
        return ConsumerHeartbeatResult(
            member_id=reconciled.member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self.config.heartbeat_interval_ms,
            assignment=dict(reconciled.assigned_partitions) if send else None,
        )

    def _validate(self, request: ConsumerHeartbeat) -> ConsumerHeartbeatResult | None:
        if not request.group_id:
            return failed(E.INVALID_REQUEST, "GroupId can't be empty.")
        if request.member_epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.rebalance_timeout_ms == -1:
                return failed(E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                return failed(E.INVALID_REQUEST, "SubscribedTopicNames or SubscribedTopicRegex must be set in "
                              "first request.")
        elif request.member_epoch > 0 and not request.member_id:
            return failed(E.INVALID_REQUEST, "MemberId can't be empty.")
        elif request.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            return failed(E.INVALID_REQUEST, f"MemberEpoch is invalid: {request.member_epoch}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and request.instance_id is None:
            return failed(E.INVALID_REQUEST, "InstanceId can't be null when leaving with epoch -2.")
        if request.subscribed_topic_regex:
            try:
                re.compile(request.subscribed_topic_regex)
            except re.error as exc:
                return failed(E.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex "
                              f"{request.subscribed_topic_regex} is not a valid regular expression: {exc}.")
        assignor = request.server_assignor
        if assignor is not None and assignor not in self.config.assignors:
            return failed(E.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {assignor} is not supported. "
                          f"Supported assignors: {', '.join(self.config.assignors)}.")
        return None

    def _member_for(self, group: ConsumerGroup, request: ConsumerHeartbeat
                    ) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None] | ConsumerHeartbeatResult:
        """The member this heartbeat is about (new, or a static member's return), and how it was before."""
        if request.member_epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.instance_id is not None:
                held = group.member_by_instance(request.instance_id)
                if held is not None:
                    if not held.has_left_static:
                        return failed(E.UNRELEASED_INSTANCE_ID, f"Static member {held.member_id} with instance id "
                                      f"{request.instance_id} is not released yet.")
                    # The returning instance takes over its assignment under a new member id, no epoch bump.
                    self._forget(group, held.member_id)
                    member = held.with_changes(member_id=request.member_id or self._new_member_id(),
                                               member_epoch=held.previous_member_epoch)
                    group.update_member(member)
                    return member, member
            existing = group.members.get(request.member_id) if request.member_id else None
            if existing is not None:
                return existing, existing  # the member lost its join response and joins again
            if len(group.members) >= self.config.max_size:
                return failed(E.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum capacity of "
                              f"{self.config.max_size} members.")
            return ConsumerGroupMember(member_id=request.member_id or self._new_member_id()), None
        member = group.members.get(request.member_id)
        if member is None:
            return failed(E.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group "
                          f"{group.group_id}.")
        if request.member_epoch != member.member_epoch:
            # A member that missed the answer moving it to its epoch may come back with the previous one,
            # as long as what it owns is still within its assignment.
            lost_answer = (request.member_epoch == member.previous_member_epoch and request.owned is not None
                           and as_pairs(request.owned) <= as_pairs(member.assigned_partitions))
            if not lost_answer:
                return failed(E.FENCED_MEMBER_EPOCH, f"The consumer group member has a member epoch "
                              f"({request.member_epoch}) different from the coordinator's ({member.member_epoch}).")
        return member, member

    def _with_request_fields(self, member: ConsumerGroupMember, request: ConsumerHeartbeat) -> ConsumerGroupMember:
        changes: dict[str, object] = {"client_id": request.client_id, "client_host": request.client_host}
        if request.instance_id is not None:
            changes["instance_id"] = request.instance_id
        if request.rack_id is not None:
            changes["rack_id"] = request.rack_id
        if request.rebalance_timeout_ms != -1:
            changes["rebalance_timeout_ms"] = request.rebalance_timeout_ms
        if request.subscribed_topic_names is not None:
            changes["subscribed_topic_names"] = tuple(sorted(set(request.subscribed_topic_names)))
        if request.subscribed_topic_regex is not None:
            changes["subscribed_topic_regex"] = request.subscribed_topic_regex or None
        if request.server_assignor is not None:
            changes["server_assignor"] = request.server_assignor
        return member.with_changes(**changes)

    @staticmethod
    def _counts(group: ConsumerGroup, member: ConsumerGroupMember, topics: TopicsImage) -> dict[str, int]:
        subscribed = group.subscribed_topics() | member.subscribed_topics
        return {t: topics.partition_count(t) or 0 for t in sorted(subscribed)}

    @staticmethod
    def _metadata_changed(group: ConsumerGroup, topics: TopicsImage) -> bool:
        counts = group.subscribed_partition_counts.items()
        return any((topics.partition_count(t) or 0) != count for t, count in counts)

    def _assign(self, group: ConsumerGroup) -> None:
        """A new target assignment at the group epoch, by the assignor most members ask for (or the default).

        A static member that is away keeps its share until it returns or its session ends."""
        chosen = sorted(m.server_assignor for m in group.members.values() if m.server_assignor)
        name = max(chosen, key=chosen.count) if chosen else self.config.assignors[0]
        spec = AssignmentSpec(
            subscriptions={mid: m.subscribed_topics for mid, m in group.members.items()},
            partition_counts=group.subscribed_partition_counts,
            previous=group.target_assignment,
        )
        group.target_assignment = ASSIGNORS[name].assign(spec)  # type: ignore[assignment]
        group.assignor_name = name
        group.assignment_epoch = group.group_epoch

    def validate_offset_commit(self, group_id: str, member_id: str, member_epoch: int) -> ErrorCode | None:
        """None when ``group_id`` is no consumer group; else whether this member may commit at this epoch.

        As Kafka: an epoch below zero commits only while the group is empty (admin tools,
        consumers without group management); a member commits at exactly its epoch, an older one
        is STALE_MEMBER_EPOCH (it may retry after its next heartbeat), a newer one fenced."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        if member_epoch < 0 and group.is_empty:
            return E.NONE
        member = group.members.get(member_id)
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        if member_epoch > member.member_epoch:
            return E.FENCED_MEMBER_EPOCH
        if member_epoch < member.member_epoch:
            return E.STALE_MEMBER_EPOCH
        return E.NONE

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9 from a member: it must be one, at its current epoch. Without a member id and
        with a negative epoch (admin tools, classic groups) nothing is checked."""
        group = self.groups.get(group_id)
        if group is None or (member_epoch < 0 and not member_id):
            return E.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return E.UNKNOWN_MEMBER_ID
        return E.NONE if member_epoch == member.member_epoch else E.STALE_MEMBER_EPOCH

    # --- leaving, sessions, revocation -----------------------------------------------------

    def _leave(self, group: ConsumerGroup | None, request: ConsumerHeartbeat) -> ConsumerHeartbeatResult:
        member = group.members.get(request.member_id) if group is not None else None
        if group is None or member is None:
            return failed(E.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group "
                          f"{request.group_id}.")
        if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # A static member leaving for a moment keeps its assignment; its session still runs.
            away = member.with_changes(member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                       previous_member_epoch=member.member_epoch)
            group.update_member(away)
            self._cancel(self._revocation_timers, group.group_id, member.member_id)
        else:
            self.remove_member(group, member.member_id)
        return ConsumerHeartbeatResult(member_id=request.member_id, member_epoch=request.member_epoch,
                                       heartbeat_interval_ms=0)

    def remove_member(self, group: ConsumerGroup, member_id: str) -> None:
        """Fence ``member_id`` out: it leaves, the group epoch moves and the others rebalance."""
        self._forget(group, member_id)
        group.group_epoch += 1
        logger.info("member %s left consumer group %r; group epoch %d", member_id, group.group_id, group.group_epoch)

    def _forget(self, group: ConsumerGroup, member_id: str) -> None:
        group.remove_member(member_id)
        self._cancel(self._sessions, group.group_id, member_id)
        self._cancel(self._revocation_timers, group.group_id, member_id)

    def _schedule_session(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        key = (group.group_id, member.member_id)
        self._cancel(self._sessions, *key)
        self._sessions[key] = self._scheduler.call_later(
            self.config.session_timeout_ms, lambda: self._expire(group.group_id, member.member_id, "session expired")
        )

    def _watch_revocation(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        key = (group.group_id, member.member_id)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._cancel(self._revocation_timers, *key)
        elif key not in self._revocation_timers:
            self._revocation_timers[key] = self._scheduler.call_later(
                member.rebalance_timeout_ms,
                lambda: self._expire(group.group_id, member.member_id, "partitions not revoked in time"),
            )

    def _expire(self, group_id: str, member_id: str, why: str) -> None:
        self._sessions.pop((group_id, member_id), None)
        self._revocation_timers.pop((group_id, member_id), None)
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            logger.info("fencing member %s of consumer group %r: %s", member_id, group_id, why)
            before = Snapshot.of(group)
            self.remove_member(group, member_id)
            self._persist(before, group)

    def _cancel(self, timers: dict[tuple[str, str], TimerHandle], group_id: str, member_id: str) -> None:
        handle = timers.pop((group_id, member_id), None)
        if handle is not None:
            handle.cancel()

    def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups of an empty consumer group: its records are tombstoned, then it is forgotten."""
        group = self.groups.get(group_id)
        if group is None:
            return E.GROUP_ID_NOT_FOUND
        if not group.is_empty:
            return E.NON_EMPTY_GROUP
        if self._log is not None and self._writer is not None:
            error = self._writer(group_id, self._log.group_tombstones(group))
            if error is not E.NONE:
                return error
        self.drop_group(group_id)
        return E.NONE

    def drop_group(self, group_id: str) -> None:
        """Forget a group (it became classic, or this broker stopped coordinating it)."""
        group = self.groups.pop(group_id, None)
        if group is not None:
            for member_id in list(group.members):
                self._forget(group, member_id)
