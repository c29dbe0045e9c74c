"""The small values client and broker share: a partition, a committed position, an isolation level.

One definition each. Both sides import them from here, so a ``TopicPartition``
built by the broker's storage and one built by the client are the same type.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar


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


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed position: the next offset to consume, the committer's metadata and its leader epoch."""

    offset: int
    metadata: str | None = ""
    leader_epoch: int = -1


class IsolationLevel(enum.IntEnum):
    """Which records a fetch may return, with the numbers Fetch and ListOffsets carry."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1

    @classmethod
    def parse(cls, level: str | int) -> IsolationLevel:
        """``"read_uncommitted"`` / ``"read_committed"`` (any case) or 0 / 1."""
        if isinstance(level, int) and not isinstance(level, bool):
            try:
                return cls(level)
            except ValueError:
                pass
        elif isinstance(level, str):
            try:
                return cls[level.strip().upper()]
            except KeyError:
                pass
        raise ValueError(f"isolation_level must be 'read_uncommitted' or 'read_committed', not {level!r}")


T = TypeVar("T")
V = TypeVar("V")


def group_by_topic(
    items: Iterable[T], key: Callable[[T], TopicPartition] = lambda tp: tp, value: Callable[[T], V] | None = None
) -> dict[str, list]:
    """``items`` grouped by topic in first-seen order: ``{topic: [value(item), ...]}``.

    ``key`` finds an item's partition (the item itself by default); ``value``
    picks what is listed (the item by default). Requests and responses of the
    Kafka protocol nest partitions under their topic, so this is how they are built.
    """
    grouped: dict[str, list] = defaultdict(list)
    for item in items:
        grouped[key(item).topic].append(item if value is None else value(item))
    return dict(grouped)
