"""The records of ``__consumer_offsets``: Kafka's keys and values, declared once.

Every key and value is a data message with its int16 version in front (see
:mod:`spate.protocol.data_schema`). The key's version says what the record
is::

    key version 0 or 1  OffsetCommitKey     group, topic, partition
    key version 2       GroupMetadataKey    group
    other versions      records of the newer group protocols, not read here

Offset commit values (v4 is v3 in flexible encoding)::

    v0, v2  offset, metadata, commit_timestamp
    v1      offset, metadata, commit_timestamp, expire_timestamp
    v3, v4  offset, leader_epoch, metadata, commit_timestamp

Group metadata values: protocol_type, generation, protocol, leader,
[v2+] current_state_timestamp, members [member_id, [v3+] group_instance_id,
client_id, client_host, [v1+] rebalance_timeout, session_timeout,
subscription, assignment]; v4 is flexible.

A null value is a tombstone: the offset was deleted or expired, or the group
was removed. Anything that does not parse raises :class:`OffsetsRecordError`.
Kafka's tools (``kafka-console-consumer --formatter ...OffsetsMessageFormatter``)
read these records byte for byte.
"""

from __future__ import annotations

from typing import Any

from spate.protocol.data_schema import data_message, read_version
from spate.protocol.declarations import Array, Field, Struct
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.types import BYTES, INT32, INT64, STRING

CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"


class OffsetsRecordError(Exception):
    """A ``__consumer_offsets`` key or value that cannot be read.

    ``unknown_type`` is set for well-formed records of kinds not read here
    (the newer group protocols' records), as opposed to garbage.
    """

    def __init__(self, message: str, *, unknown_type: bool = False) -> None:
        super().__init__(message)
        self.unknown_type = unknown_type


OffsetCommitKey = data_message(
    "OffsetCommitKey",
    versions=(0, 1),
    flexible_from=None,
    fields=[
        Field("group", STRING),
        Field("topic", STRING),
        Field("partition", INT32),
    ],
)

GroupMetadataKey = data_message(
    "GroupMetadataKey",
    versions=(2, 2),
    flexible_from=None,
    fields=[Field("group", STRING)],
)

OffsetCommitValue = data_message(
    "OffsetCommitValue",
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("offset", INT64),
        Field("leader_epoch", INT32, versions=(3, None), default=-1),
        Field("metadata", STRING),
        Field("commit_timestamp", INT64),
        Field("expire_timestamp", INT64, versions=(1, 1), default=-1),
    ],
)

GroupMetadataValue = data_message(
    "GroupMetadataValue",
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("protocol_type", STRING),
        Field("generation", INT32),
        Field("protocol", STRING, nullable=True),
        Field("leader", STRING, nullable=True),
        Field("current_state_timestamp", INT64, versions=(2, None), default=-1),
        Field(
            "members",
            Array(
                Struct(
                    "MemberMetadata",
                    Field("member_id", STRING),
                    Field("group_instance_id", STRING, versions=(3, None), nullable=True, default=None),
                    Field("client_id", STRING),
                    Field("client_host", STRING),
                    # Version 0 has none: -1 here, read as the session timeout (decode_group_metadata_value).
                    Field("rebalance_timeout", INT32, versions=(1, None), default=-1),
                    Field("session_timeout", INT32),
                    Field("subscription", BYTES),
                    Field("assignment", BYTES),
                )
            ),
        ),
    ],
)

_KEYS = (OffsetCommitKey, GroupMetadataKey)


def decode_key(data: bytes | memoryview | None) -> Any:
    """An :data:`OffsetCommitKey` or a :data:`GroupMetadataKey`; OffsetsRecordError otherwise."""
    if data is None:
        raise OffsetsRecordError("record without a key")
    try:
        version, body = read_version(data)
        for key in _KEYS:
            if version in key.SCHEMA.versions:
                return key.decode_version(body, version)
    except ProtocolDecodeError as exc:
        raise OffsetsRecordError(f"__consumer_offsets key: {exc}") from None
    raise OffsetsRecordError(f"key version {version} is not an offset or classic group record", unknown_type=True)


def decode_offset_commit_value(data: bytes | memoryview) -> Any:
    """An :data:`OffsetCommitValue` of any version; OffsetsRecordError if it does not parse."""
    try:
        return OffsetCommitValue.from_version_prefixed_bytes(data)
    except ProtocolDecodeError as exc:
        raise OffsetsRecordError(f"offset commit value: {exc}") from None


def decode_group_metadata_value(data: bytes | memoryview) -> Any:
    """A :data:`GroupMetadataValue` of any version; OffsetsRecordError if it does not parse.

    Members of version 0, which stored no rebalance timeout, get their
    session timeout as one, as Kafka reads them.
    """
    try:
        value = GroupMetadataValue.from_version_prefixed_bytes(data)
    except ProtocolDecodeError as exc:
        raise OffsetsRecordError(f"group metadata value: {exc}") from None
    for member in value.members:
        if member.rebalance_timeout < 0:
            member.rebalance_timeout = member.session_timeout
    return value
