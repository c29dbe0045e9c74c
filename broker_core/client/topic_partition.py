"""A partition of a topic, and an offset found by timestamp."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """One partition of one topic; hashable, ordered by topic then partition."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """An offset with the timestamp of the record there (-1 when the broker gives none).

    ``leader_epoch`` is the leader epoch of that record's batch, -1 when unknown.
    """

    offset: int
    timestamp: int
    leader_epoch: int = -1
