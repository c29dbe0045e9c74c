"""The segments of one log, ordered by base offset.

Lookups bisect a sorted list of base offsets. The structure is owned by the
log's single writer; readers on the same thread see a consistent view
between two writer calls.
"""

from __future__ import annotations

import bisect
from typing import Iterator

from broker_core.storage.segment import LogSegment


class LogSegments:
    """A sorted map from base offset to ``LogSegment``."""

    def __init__(self) -> None:
        self._bases: list[int] = []
        self._segments: dict[int, LogSegment] = {}

    def __len__(self) -> int:
        return len(self._bases)

    def __iter__(self) -> Iterator[LogSegment]:
        """Segments in offset order (a snapshot: safe to mutate while iterating)."""
        return iter([self._segments[base] for base in list(self._bases)])

    def __contains__(self, base_offset: object) -> bool:
        return base_offset in self._segments

    def add(self, segment: LogSegment) -> None:
        """Insert ``segment``, replacing one with the same base offset."""
        if segment.base_offset not in self._segments:
            bisect.insort(self._bases, segment.base_offset)
        self._segments[segment.base_offset] = segment

    def remove(self, base_offset: int) -> LogSegment:
        segment = self._segments.pop(base_offset)
        del self._bases[bisect.bisect_left(self._bases, base_offset)]
        return segment

    def get(self, base_offset: int) -> LogSegment | None:
        return self._segments.get(base_offset)

    @property
    def first(self) -> LogSegment | None:
        return self._segments[self._bases[0]] if self._bases else None

    @property
    def last(self) -> LogSegment | None:
        return self._segments[self._bases[-1]] if self._bases else None

    def floor(self, offset: int) -> LogSegment | None:
        """The segment with the greatest base offset <= ``offset``."""
        i = bisect.bisect_right(self._bases, offset)
        return self._segments[self._bases[i - 1]] if i else None

    def higher(self, base_offset: int) -> LogSegment | None:
        """The first segment whose base offset is > ``base_offset``."""
        i = bisect.bisect_right(self._bases, base_offset)
        return self._segments[self._bases[i]] if i < len(self._bases) else None

    def from_offset(self, offset: int) -> list[LogSegment]:
        """The segment holding ``offset`` (the floor) and every later one."""
        i = max(0, bisect.bisect_right(self._bases, offset) - 1)
        return [self._segments[base] for base in self._bases[i:]]

    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments.values())
