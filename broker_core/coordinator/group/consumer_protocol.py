"""The one part of the consumer embedded protocol the coordinator reads: subscribed topics.

Members of a group with protocol type ``consumer`` put a ConsumerProtocol
subscription in their JoinGroup metadata::

    version int16, topics [string] (int32 count), user_data nullable bytes,
    v1+: owned partitions, v2+: generation id, v3+: rack id

Only ``version`` and ``topics`` are needed, to know which topics a group is
consuming (offsets of those neither expire nor may be deleted). Anything that
does not parse yields ``None``: the coordinator then treats the group as one
whose topics it cannot know, as Kafka does.
"""

from __future__ import annotations

from typing import Iterable

from spate.protocol import types as t
from spate.protocol.errors import ProtocolDecodeError

CONSUMER_PROTOCOL_TYPE = "consumer"


def subscribed_topics(metadata: bytes) -> frozenset[str] | None:
    """The topics of one member's subscription, or ``None`` if it cannot be read."""
    mv = memoryview(metadata)
    try:
        version, pos = t.INT16.decode(mv, 0)
        if version < 0:
            return None
        topics, _ = t.array_codec(t.STRING).decode(mv, pos)
    except ProtocolDecodeError:
        return None
    return frozenset(topics)


def group_subscribed_topics(protocol_type: str | None, metadata: Iterable[bytes]) -> frozenset[str] | None:
    """The union over members, or ``None`` unless every member's subscription parses."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        return None
    topics: set[str] = set()
    for item in metadata:
        member_topics = subscribed_topics(item)
        if member_topics is None:
            return None
        topics |= member_topics
    return frozenset(topics)


def encode_subscription(topics: Iterable[str], user_data: bytes | None = None) -> bytes:
    """A version 0 subscription, for tests and tools that act as a member."""
    buf = bytearray()
    t.INT16.encode(buf, 0)
    t.array_codec(t.STRING).encode(buf, list(topics))
    t.NULLABLE_BYTES.encode(buf, user_data)
    return bytes(buf)
