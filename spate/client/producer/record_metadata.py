"""Where the broker put a produced record: what a delivery future resolves to."""

from __future__ import annotations

from typing import NamedTuple

from spate.structs import TopicPartition


# A named tuple rather than a frozen dataclass: one is built per acknowledged
# record, and a frozen dataclass costs several times as much to construct.
class RecordMetadata(NamedTuple):
    """A delivered record's partition, offset and timestamp.

    ``offset`` is -1 when it is unknown: with ``acks=0`` nothing is answered,
    and a retry the broker recognised as a duplicate of an older batch it
    could no longer place is acknowledged without one. ``timestamp`` is the
    record's create time, or the broker's append time for a topic with
    ``message.timestamp.type=LogAppendTime``.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)
