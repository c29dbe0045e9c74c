"""What the group coordinator writes to ``__consumer_offsets``, and how it reads it back.

The record formats are declared in
:mod:`spate.protocol.internal_records.consumer_offsets`; this module picks
the versions this broker writes, as Kafka does, and turns stored offsets
into :class:`CommittedOffset` values:

* keys: offset commits as version 1, group metadata as version 2;
* offset commit values: version 3, or version 1 when the committer set a
  retention time (only version 1 carries an expire timestamp, and it has no
  leader epoch);
* group metadata values: version 3.

The ``*_record`` and ``*_tombstone`` functions build whole records (key and
value) from the coordinator's state, as Kafka's GroupCoordinatorRecordHelpers do.
"""

from __future__ import annotations

from typing import Any, Mapping

from broker_core.coordinator.group.group_metadata import GroupMetadata
from broker_core.coordinator.group.offsets import NO_EXPIRE_TIMESTAMP, CommittedOffset
from broker_core.coordinator.internal_topic import KeyValue
from spate.protocol.internal_records.consumer_offsets import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    OffsetsRecordError,
    decode_group_metadata_value,
    decode_key,
)
from spate.protocol.internal_records.consumer_offsets import (
    decode_offset_commit_value as decode_offset_commit_record,
)
from spate.structs import TopicPartition

__all__ = [
    "GroupMetadataKey",
    "GroupMetadataValue",
    "OffsetCommitKey",
    "OffsetsRecordError",
    "decode_group_metadata_value",
    "decode_key",
    "decode_offset_commit_value",
    "group_metadata_key",
    "group_metadata_record",
    "group_metadata_value",
    "group_tombstone",
    "offset_commit_key",
    "offset_commit_record",
    "offset_commit_value",
    "offset_tombstone",
]

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return OffsetCommitKey(group, topic, partition).to_version_prefixed_bytes(OFFSET_COMMIT_KEY_VERSION)


def group_metadata_key(group: str) -> bytes:
    return GroupMetadataKey(group).to_version_prefixed_bytes(GROUP_METADATA_KEY_VERSION)


def offset_commit_value(committed: CommittedOffset) -> bytes:
    value = OffsetCommitValue(
        offset=committed.offset,
        leader_epoch=committed.leader_epoch,
        metadata=committed.metadata,
        commit_timestamp=committed.commit_timestamp_ms,
        expire_timestamp=committed.expire_timestamp_ms,
    )
    has_expiry = committed.expire_timestamp_ms != NO_EXPIRE_TIMESTAMP
    return value.to_version_prefixed_bytes(
        OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY if has_expiry else OFFSET_COMMIT_VALUE_VERSION
    )


def group_metadata_value(value: Any) -> bytes:
    """A :data:`GroupMetadataValue`, as this broker stores it."""
    return value.to_version_prefixed_bytes(GROUP_METADATA_VALUE_VERSION)


def decode_offset_commit_value(data: bytes | memoryview) -> CommittedOffset:
    """A stored offset of any version; OffsetsRecordError if it does not parse."""
    value = decode_offset_commit_record(data)
    return CommittedOffset(
        value.offset, value.leader_epoch, value.metadata, value.commit_timestamp, value.expire_timestamp
    )


# --- whole records -----------------------------------------------------------------------------


def offset_commit_record(group_id: str, tp: TopicPartition, committed: CommittedOffset) -> KeyValue:
    return offset_commit_key(group_id, tp.topic, tp.partition), offset_commit_value(committed)


def offset_tombstone(group_id: str, tp: TopicPartition) -> KeyValue:
    return offset_commit_key(group_id, tp.topic, tp.partition), None


def group_tombstone(group_id: str) -> KeyValue:
    return group_metadata_key(group_id), None


def group_metadata_record(group: GroupMetadata, assignments: Mapping[str, bytes] | None = None) -> KeyValue:
    """The group's generation, leader, protocol and members (with ``assignments`` if given, else their own)."""
    protocol = group.protocol_name
    members = [
        GroupMetadataValue.MemberMetadata(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout=m.rebalance_timeout_ms,
            session_timeout=m.session_timeout_ms,
            subscription=m.metadata_for(protocol) if protocol is not None else b"",
            assignment=assignments.get(m.member_id, b"") if assignments is not None else m.assignment,
        )
        for m in group
    ]
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=protocol,
        leader=group.leader_id if members else None,
        current_state_timestamp=group.state_timestamp_ms if group.state_timestamp_ms is not None else -1,
        members=members,
    )
    return group_metadata_key(group.group_id), group_metadata_value(value)
