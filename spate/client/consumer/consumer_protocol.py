"""Kafka's ConsumerProtocol: what group members put in JoinGroup metadata and SyncGroup assignments.

The group coordinator treats both as opaque bytes; consumers agree on this
format (protocol type ``consumer``) so that any client can lead a group::

    Subscription  version int16, topics [string] (int32 count), user_data nullable bytes,
                  v1+: owned partitions [topic string, partitions [int32]],
                  v2+: generation int32, v3+: rack nullable string
    Assignment    version int16, partitions [topic string, partitions [int32]],
                  user_data nullable bytes

This client writes version 0 of both and reads any version, looking only at
the fields version 0 has; later versions append fields, so readers of older
versions stay compatible. The broker keeps its own reader for subscriptions
(it needs only the topics); the client's lives here so that the client does
not load the broker's coordinator package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from spate.protocol import types as t
from spate.protocol.errors import ProtocolDecodeError
from spate.structs import TopicPartition, group_by_topic

CONSUMER_PROTOCOL_TYPE = "consumer"
_VERSION = 0


@dataclass(frozen=True, slots=True)
class Subscription:
    """One member's subscription: its topics, sorted, and its assignor's user data."""

    topics: tuple[str, ...]
    user_data: bytes | None = None


def encode_subscription(topics: Iterable[str], user_data: bytes | None = None) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, _VERSION)
    t.array_codec(t.STRING).encode(buf, sorted(set(topics)))
    t.NULLABLE_BYTES.encode(buf, user_data)
    return bytes(buf)


def decode_subscription(data: bytes) -> Subscription:
    """Raises ProtocolDecodeError for bytes that are not a subscription."""
    mv = memoryview(data)
    version, pos = t.INT16.decode(mv, 0)
    if version < 0:
        raise ProtocolDecodeError(f"negative consumer protocol version {version}")
    topics, pos = t.array_codec(t.STRING).decode(mv, pos)
    if topics is None:
        raise ProtocolDecodeError("a subscription without a topic list")
    user_data = None
    if pos < len(data):
        user_data, pos = t.NULLABLE_BYTES.decode(mv, pos)
    return Subscription(tuple(sorted(set(topics))), user_data)


def decode_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """The partitions of an assignment, sorted; empty bytes mean no assignment.

    Raises ProtocolDecodeError for bytes that are not an assignment.
    """
    if not data:
        return ()
    mv = memoryview(data)
    version, pos = t.INT16.decode(mv, 0)
    if version < 0:
        raise ProtocolDecodeError(f"negative consumer protocol version {version}")
    count, pos = t.INT32.decode(mv, pos)
    if count < 0 or count > len(data):
        raise ProtocolDecodeError(f"bad topic count {count} in an assignment")
    partitions: list[TopicPartition] = []
    for _ in range(count):
        topic, pos = t.STRING.decode(mv, pos)
        numbers, pos = t.array_codec(t.INT32).decode(mv, pos)
        partitions.extend(TopicPartition(topic, p) for p in numbers or ())
    return tuple(sorted(partitions))


def encode_assignment(partitions: Iterable[TopicPartition], user_data: bytes | None = None) -> bytes:
    """A version 0 assignment, the inverse of :func:`decode_assignment`."""
    by_topic = group_by_topic(partitions, value=lambda tp: tp.partition)
    buf = bytearray()
    t.INT16.encode(buf, _VERSION)
    t.INT32.encode(buf, len(by_topic))
    for topic in sorted(by_topic):
        t.STRING.encode(buf, topic)
        t.array_codec(t.INT32).encode(buf, sorted(by_topic[topic]))
    t.NULLABLE_BYTES.encode(buf, user_data)
    return bytes(buf)
