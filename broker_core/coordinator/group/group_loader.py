"""Rebuilding groups and their offsets from one ``__consumer_offsets`` partition.

Records are replayed oldest first, so the newest value of each key wins and
a tombstone (null value) removes what came before it; this gives the same
answer before and after compaction. Then:

* a group with a metadata record comes back Stable with its members and
  their assignments (they keep heartbeating across a broker restart), or
  Empty if it had none;
* offsets whose group has no (surviving) metadata record belong to a group
  that only stores offsets here: it comes back Empty with no protocol type.

Records this broker cannot read (other group protocols, garbage written by
a client) are skipped and counted, never fatal: one bad record must not
cost every group in the partition its offsets.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Iterable

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.member import MemberMetadata, Protocol
from broker_core.coordinator.group.offsets import OffsetAndMetadata
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetsRecordError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
)
from broker_core.records import Record
from broker_core.storage.files import TopicPartition

logger = logging.getLogger(__name__)


@dataclass
class LoadedPartition:
    groups: dict[str, GroupMetadata] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0


def replay(records: Iterable[Record]) -> LoadedPartition:
    """Groups as the records leave them."""
    metadata: dict[str, GroupMetadataValue] = {}
    offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
    loaded = LoadedPartition()
    for record in records:
        loaded.records += 1
        try:
            key = decode_key(record.key)
            if isinstance(key, OffsetCommitKey):
                tp = TopicPartition(key.topic, key.partition)
                if record.value is None:
                    offsets.get(key.group, {}).pop(tp, None)
                else:
                    offsets.setdefault(key.group, {})[tp] = decode_offset_commit_value(record.value)
            elif isinstance(key, GroupMetadataKey):
                if record.value is None:
                    metadata.pop(key.group, None)
                else:
                    metadata[key.group] = decode_group_metadata_value(record.value)
        except OffsetsRecordError as exc:
            loaded.skipped += 1
            if not exc.unknown_type:
                logger.warning("skipping unreadable __consumer_offsets record at offset %d: %s", record.offset, exc)
    for group_id, value in metadata.items():
        group = group_from_value(group_id, value)
        group.offsets.update(offsets.pop(group_id, {}))
        loaded.groups[group_id] = group
    for group_id, committed in offsets.items():
        if committed:
            group = GroupMetadata(group_id)
            group.offsets.update(committed)
            loaded.groups[group_id] = group
    return loaded


def group_from_value(group_id: str, value: GroupMetadataValue) -> GroupMetadata:
    state_timestamp = value.current_state_timestamp_ms if value.current_state_timestamp_ms >= 0 else None
    has_members = bool(value.members) and value.protocol is not None
    group = GroupMetadata(
        group_id,
        state=GroupState.STABLE if has_members else GroupState.EMPTY,
        now_ms=state_timestamp,
        generation_id=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol if has_members else None,
        leader_id=value.leader if has_members else None,
    )
    if not has_members:
        return group
    for stored in value.members:
        group.add_member(
            MemberMetadata(
                member_id=stored.member_id,
                group_instance_id=stored.group_instance_id,
                client_id=stored.client_id,
                client_host=stored.client_host,
                rebalance_timeout_ms=stored.rebalance_timeout_ms,
                session_timeout_ms=stored.session_timeout_ms,
                protocol_type=value.protocol_type,
                protocols=(Protocol(value.protocol, stored.subscription),),  # type: ignore[arg-type]
                assignment=stored.assignment,
            )
        )
    if group.leader_id not in group.members:
        group.leader_id = next(iter(group.members))
    group.refresh_subscribed_topics()
    return group
