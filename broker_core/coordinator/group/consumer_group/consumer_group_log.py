"""A consumer group's records in ``__consumer_offsets``: what changed, written; all of them, read back.

After each change the coordinator compares the group with a snapshot taken
before it and writes, as Kafka's GroupCoordinatorRecordHelpers do:

* the group epoch (key 3) when it moved;
* a member's metadata (key 5) when it joined or its subscription changed;
* the assignment epoch (key 6) and each changed member target (key 7) after
  a new target assignment;
* a member's current assignment (key 8) when its epochs or partitions moved;
* tombstones of keys 5, 7 and 8 when a member left.

Replaying a partition's records, oldest first, rebuilds every consumer group
with its members, target assignment and each member's reconciliation state,
so a new coordinator carries on where the old one stopped. Partitions are
stored by topic id; a topic no longer known is dropped from the assignments.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from broker_core.coordinator.group.consumer_group.consumer_group import ConsumerGroup
from broker_core.coordinator.group.consumer_group.consumer_group_member import ConsumerGroupMember, MemberState
from broker_core.coordinator.internal_topic import KeyValue
from spate.protocol.internal_records.consumer_group_records import (
    CONSUMER_GROUP_RECORDS,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
)

# The int8 Kafka stores for each member state.
STATE_CODES = {MemberState.UNREVOKED_PARTITIONS: 0, MemberState.UNRELEASED_PARTITIONS: 1, MemberState.STABLE: 2,
               MemberState.UNKNOWN: 127}
STATES_BY_CODE = {code: state for state, code in STATE_CODES.items()}


@dataclass(frozen=True)
class TopicIds:
    """How topic names and ids translate (the cluster's metadata)."""

    id_of: Callable[[str], uuid.UUID | None]
    name_of: Callable[[uuid.UUID], str | None]


@dataclass(frozen=True)
class Snapshot:
    group_epoch: int
    assignment_epoch: int
    members: dict[str, ConsumerGroupMember]
    target_assignment: dict[str, Any]

    @classmethod
    def of(cls, group: ConsumerGroup | None) -> Snapshot:
        if group is None:
            return cls(-1, -1, {}, {})
        return cls(group.group_epoch, group.assignment_epoch, dict(group.members), dict(group.target_assignment))


def _kv(key: Any, version: int, value: Any | None) -> KeyValue:
    return key.to_version_prefixed_bytes(version), None if value is None else value.to_version_prefixed_bytes(0)


@dataclass
class ConsumerGroupLog:
    topic_ids: TopicIds

    def changes(self, before: Snapshot, group: ConsumerGroup) -> list[KeyValue]:
        gid = group.group_id
        records: list[KeyValue] = []
        for member_id, old in before.members.items():
            if member_id not in group.members:
                records += [_kv(ConsumerGroupMemberMetadataKey(gid, member_id), 5, None),
                            _kv(ConsumerGroupTargetAssignmentMemberKey(gid, member_id), 7, None),
                            _kv(ConsumerGroupCurrentMemberAssignmentKey(gid, member_id), 8, None)]
        # Members are immutable values: one that is the same object as before did not change.
        changed = [(before.members.get(mid), m) for mid, m in group.members.items() if before.members.get(mid) is not m]
        for old, member in changed:
            if old is None or _metadata(old) != _metadata(member):
                records.append(self._member_metadata(gid, member))
        if group.group_epoch != before.group_epoch:
            records.append(_kv(ConsumerGroupMetadataKey(gid), 3, ConsumerGroupMetadataValue(group.group_epoch)))
        if group.assignment_epoch != before.assignment_epoch:
            for member_id, target in group.target_assignment.items():
                if before.target_assignment.get(member_id) != target:
                    value = ConsumerGroupTargetAssignmentMemberValue(topic_partitions=self._by_id(
                        target, ConsumerGroupTargetAssignmentMemberValue.TopicPartition))
                    records.append(_kv(ConsumerGroupTargetAssignmentMemberKey(gid, member_id), 7, value))
            records.append(_kv(ConsumerGroupTargetAssignmentMetadataKey(gid), 6,
                               ConsumerGroupTargetAssignmentMetadataValue(group.assignment_epoch)))
        for old, member in changed:
            if old is None or _current(old) != _current(member):
                records.append(self._current_assignment(gid, member))
        return records

    def group_tombstones(self, group: ConsumerGroup) -> list[KeyValue]:
        """The group's own records, deleted (its members' are already gone: it is empty)."""
        gid = group.group_id
        return [_kv(ConsumerGroupTargetAssignmentMetadataKey(gid), 6, None), _kv(ConsumerGroupMetadataKey(gid), 3, None)]

    def _member_metadata(self, gid: str, m: ConsumerGroupMember) -> KeyValue:
        value = ConsumerGroupMemberMetadataValue(
            instance_id=m.instance_id, rack_id=m.rack_id, client_id=m.client_id, client_host=m.client_host,
            subscribed_topic_names=list(m.subscribed_topic_names), subscribed_topic_regex=m.subscribed_topic_regex,
            server_assignor=m.server_assignor, rebalance_timeout_ms=m.rebalance_timeout_ms)
        return _kv(ConsumerGroupMemberMetadataKey(gid, m.member_id), 5, value)

    def _current_assignment(self, gid: str, m: ConsumerGroupMember) -> KeyValue:
        tp = ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions
        value = ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=m.member_epoch, previous_member_epoch=m.previous_member_epoch,
            state=STATE_CODES[m.state], assigned_partitions=self._by_id(m.assigned_partitions, tp),
            partitions_pending_revocation=self._by_id(m.partitions_pending_revocation, tp))
        return _kv(ConsumerGroupCurrentMemberAssignmentKey(gid, m.member_id), 8, value)

    def _by_id(self, partitions: Mapping[str, frozenset[int]], cls: Any) -> list[Any]:
        out = []
        for name, ps in sorted(partitions.items()):
            topic_id = self.topic_ids.id_of(name)
            if topic_id is not None:
                out.append(cls(topic_id=topic_id, partitions=sorted(ps)))
        return out

    def _by_name(self, topic_partitions: Iterable[Any]) -> dict[str, frozenset[int]]:
        named = {}
        for tp in topic_partitions:
            name = self.topic_ids.name_of(tp.topic_id)
            if name is not None:
                named[name] = frozenset(tp.partitions)
        return named

    # --- reading back -------------------------------------------------------------------------

    def replay(self, records: Iterable[tuple[bytes, bytes | None]]) -> dict[str, ConsumerGroup]:
        """Consumer groups as ``(key, value)`` records (oldest first) leave them; others are ignored."""
        state: dict[str, _Loading] = {}
        for key_bytes, value_bytes in records:
            version = int.from_bytes(key_bytes[:2], "big", signed=True)
            if version not in CONSUMER_GROUP_RECORDS:
                continue
            key_cls, value_cls = CONSUMER_GROUP_RECORDS[version]
            key = key_cls.decode_version(memoryview(key_bytes)[2:], version)
            value = None if value_bytes is None else value_cls.from_version_prefixed_bytes(value_bytes)
            loading = state.setdefault(key.group_id, _Loading())
            member_id = getattr(key, "member_id", None)
            slot = {3: loading.epoch, 5: loading.metadata, 6: loading.assignment_epoch, 7: loading.targets,
                    8: loading.current}[version]
            slot_key = member_id if member_id is not None else ""
            if value is None:
                slot.pop(slot_key, None)
            else:
                slot[slot_key] = value
        return {gid: self._group(gid, loading) for gid, loading in state.items() if "" in loading.epoch}

    def _group(self, gid: str, loading: _Loading) -> ConsumerGroup:
        group = ConsumerGroup(gid, group_epoch=loading.epoch[""].epoch)
        if "" in loading.assignment_epoch:
            group.assignment_epoch = loading.assignment_epoch[""].assignment_epoch
        for member_id, target in loading.targets.items():
            group.target_assignment[member_id] = self._by_name(target.topic_partitions)
        for member_id, meta in loading.metadata.items():
            member = ConsumerGroupMember(
                member_id=member_id, instance_id=meta.instance_id, rack_id=meta.rack_id, client_id=meta.client_id,
                client_host=meta.client_host, rebalance_timeout_ms=meta.rebalance_timeout_ms,
                subscribed_topic_names=tuple(meta.subscribed_topic_names),
                subscribed_topic_regex=meta.subscribed_topic_regex, server_assignor=meta.server_assignor)
            current = loading.current.get(member_id)
            if current is not None:
                member = member.with_changes(
                    member_epoch=current.member_epoch, previous_member_epoch=current.previous_member_epoch,
                    state=STATES_BY_CODE.get(current.state, MemberState.UNKNOWN),
                    assigned_partitions=self._by_name(current.assigned_partitions),
                    partitions_pending_revocation=self._by_name(current.partitions_pending_revocation))
            group.update_member(member)
        return group


@dataclass
class _Loading:
    epoch: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    assignment_epoch: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, Any] = field(default_factory=dict)
    current: dict[str, Any] = field(default_factory=dict)


def _metadata(m: ConsumerGroupMember) -> tuple[Any, ...]:
    return (m.instance_id, m.rack_id, m.client_id, m.client_host, m.subscribed_topic_names,
            m.subscribed_topic_regex, m.server_assignor, m.rebalance_timeout_ms)


def _current(m: ConsumerGroupMember) -> tuple[Any, ...]:
    return (m.member_epoch, m.previous_member_epoch, m.state, m.assigned_partitions, m.partitions_pending_revocation)
