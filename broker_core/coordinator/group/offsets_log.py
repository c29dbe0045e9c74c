"""The record format of ``__consumer_offsets``: Kafka's keys and values, byte for byte.

Every key and value starts with an int16 version; the rest uses the
protocol's primitives (int16-length strings, int32-length bytes, int32-count
arrays; in flexible version 4 the compact forms and a tagged-field section at
the end of each struct). Kafka's tools (``kafka-console-consumer
--formatter ...OffsetsMessageFormatter``) read what is written here.

Keys::

    version 0 or 1  offset commit    group string, topic string, partition int32
    version 2       group metadata   group string

Offset commit values (this broker writes v3, or v1 when the committer set a
retention time, as Kafka does)::

    v0, v2  offset int64, metadata string, commit_timestamp int64
    v1      offset int64, metadata string, commit_timestamp int64, expire_timestamp int64
    v3      offset int64, leader_epoch int32, metadata string, commit_timestamp int64
    v4      v3 in flexible encoding

Group metadata values (this broker writes v3)::

    protocol_type string, generation int32, protocol nullable string,
    leader nullable string, [v2+] current_state_timestamp int64,
    members [member_id string, [v3+] group_instance_id nullable string,
             client_id string, client_host string, [v1+] rebalance_timeout int32,
             session_timeout int32, subscription bytes, assignment bytes]

A null value is a tombstone: the offset was deleted or expired, or the group
was removed. Anything that does not parse raises :class:`OffsetsRecordError`;
the loader skips such records so a stray write cannot stop a partition from
loading.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.coordinator.group.offsets import NO_EXPIRE_TIMESTAMP, CommittedOffset
from broker_core.coordinator.record_fields import RecordFieldReader
from spate.protocol import types as t

OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_METADATA_VALUE_VERSION = 3
_FLEXIBLE_VALUE_VERSION = 4


class OffsetsRecordError(Exception):
    """A ``__consumer_offsets`` key or value that this broker cannot read.

    ``unknown_type`` is set for well-formed records of kinds it does not
    serve (the newer group protocols' records), as opposed to garbage.
    """

    def __init__(self, message: str, *, unknown_type: bool = False) -> None:
        super().__init__(message)
        self.unknown_type = unknown_type


@dataclass(frozen=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True)
class MemberMetadataValue:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp_ms: int
    members: tuple[MemberMetadataValue, ...]


# --- encoding --------------------------------------------------------------------------------


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, OFFSET_COMMIT_KEY_VERSION)
    t.STRING.encode(buf, group)
    t.STRING.encode(buf, topic)
    t.INT32.encode(buf, partition)
    return bytes(buf)


def group_metadata_key(group: str) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, GROUP_METADATA_KEY_VERSION)
    t.STRING.encode(buf, group)
    return bytes(buf)


def offset_commit_value(committed: CommittedOffset) -> bytes:
    buf = bytearray()
    if committed.expire_timestamp_ms != NO_EXPIRE_TIMESTAMP:
        t.INT16.encode(buf, OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY)
        t.INT64.encode(buf, committed.offset)
        t.STRING.encode(buf, committed.metadata)
        t.INT64.encode(buf, committed.commit_timestamp_ms)
        t.INT64.encode(buf, committed.expire_timestamp_ms)
        return bytes(buf)
    t.INT16.encode(buf, OFFSET_COMMIT_VALUE_VERSION)
    t.INT64.encode(buf, committed.offset)
    t.INT32.encode(buf, committed.leader_epoch)
    t.STRING.encode(buf, committed.metadata)
    t.INT64.encode(buf, committed.commit_timestamp_ms)
    return bytes(buf)


def group_metadata_value(value: GroupMetadataValue) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, GROUP_METADATA_VALUE_VERSION)
    t.STRING.encode(buf, value.protocol_type)
    t.INT32.encode(buf, value.generation)
    t.NULLABLE_STRING.encode(buf, value.protocol)
    t.NULLABLE_STRING.encode(buf, value.leader)
    t.INT64.encode(buf, value.current_state_timestamp_ms)
    t.INT32.encode(buf, len(value.members))
    for member in value.members:
        t.STRING.encode(buf, member.member_id)
        t.NULLABLE_STRING.encode(buf, member.group_instance_id)
        t.STRING.encode(buf, member.client_id)
        t.STRING.encode(buf, member.client_host)
        t.INT32.encode(buf, member.rebalance_timeout_ms)
        t.INT32.encode(buf, member.session_timeout_ms)
        t.BYTES.encode(buf, member.subscription)
        t.BYTES.encode(buf, member.assignment)
    return bytes(buf)


# --- decoding --------------------------------------------------------------------------------


def decode_key(data: bytes | memoryview | None) -> OffsetCommitKey | GroupMetadataKey:
    if data is None:
        raise OffsetsRecordError("record without a key")
    reader = RecordFieldReader(data, "__consumer_offsets key", OffsetsRecordError)
    version = reader.read(t.INT16)
    if version in (0, 1):
        key: OffsetCommitKey | GroupMetadataKey = OffsetCommitKey(
            reader.read(t.STRING), reader.read(t.STRING), reader.read(t.INT32)
        )
    elif version == GROUP_METADATA_KEY_VERSION:
        key = GroupMetadataKey(reader.read(t.STRING))
    else:
        raise OffsetsRecordError(f"key version {version} is not an offset or classic group record", unknown_type=True)
    reader.finish()
    return key


def decode_offset_commit_value(data: bytes | memoryview) -> CommittedOffset:
    reader = RecordFieldReader(data, "offset commit value", OffsetsRecordError)
    version = reader.read(t.INT16)
    if not 0 <= version <= _FLEXIBLE_VALUE_VERSION:
        raise OffsetsRecordError(f"offset commit value version {version} is unknown")
    reader.flexible = version >= _FLEXIBLE_VALUE_VERSION
    offset = reader.read(t.INT64)
    leader_epoch = reader.read(t.INT32) if version >= 3 else -1
    metadata = reader.string()
    commit_timestamp = reader.read(t.INT64)
    expire_timestamp = reader.read(t.INT64) if version == 1 else NO_EXPIRE_TIMESTAMP
    reader.end_struct()
    reader.finish()
    return CommittedOffset(offset, leader_epoch, metadata or "", commit_timestamp, expire_timestamp)


def decode_group_metadata_value(data: bytes | memoryview) -> GroupMetadataValue:
    reader = RecordFieldReader(data, "group metadata value", OffsetsRecordError)
    version = reader.read(t.INT16)
    if not 0 <= version <= _FLEXIBLE_VALUE_VERSION:
        raise OffsetsRecordError(f"group metadata value version {version} is unknown")
    reader.flexible = version >= _FLEXIBLE_VALUE_VERSION
    protocol_type = reader.string()
    generation = reader.read(t.INT32)
    protocol = reader.string(nullable=True)
    leader = reader.string(nullable=True)
    state_timestamp = reader.read(t.INT64) if version >= 2 else -1
    members = []
    for _ in range(reader.count()):
        member_id = reader.string()
        instance_id = reader.string(nullable=True) if version >= 3 else None
        client_id = reader.string()
        client_host = reader.string()
        rebalance_timeout = reader.read(t.INT32) if version >= 1 else -1
        session_timeout = reader.read(t.INT32)
        subscription = reader.bytes_()
        assignment = reader.bytes_()
        reader.end_struct()
        if rebalance_timeout < 0:
            rebalance_timeout = session_timeout  # v0 had none; Kafka used the session timeout
        members.append(
            MemberMetadataValue(
                member_id, instance_id, client_id, client_host, rebalance_timeout, session_timeout,  # type: ignore[arg-type]
                subscription, assignment,
            )
        )
    reader.end_struct()
    reader.finish()
    return GroupMetadataValue(protocol_type, generation, protocol, leader, state_timestamp, tuple(members))  # type: ignore[arg-type]
