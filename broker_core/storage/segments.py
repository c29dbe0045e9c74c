"""The segments of one log, ordered by base offset, and the queries that span them.

Lookups bisect a sorted list of base offsets. The queries that may need more
than one segment live here too: a read that continues in the next segment
when one holds nothing at the requested offset (a gap left by compaction, an
empty segment), the aborted transactions a fetch overlaps (an abort may come
segments after its data), the first batch at a timestamp, and what retention
may weigh. They take the log's offsets as arguments; range checks against
the log start and end stay with the log.

The structure is owned by the log's single writer; readers on the same thread
see a consistent view between two writer calls.
"""

from __future__ import annotations

import bisect
from typing import Iterator

from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.retention import RetentionCandidate
from broker_core.storage.segment import LogSegment
from broker_core.storage.time_index import TimestampOffset
from broker_core.storage.txn_index import AbortedTxn


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

    # ------------------------------------------------- queries across segments

    def read(
        self, start_offset: int, max_bytes: int, *, max_offset: int | None, min_one_batch: bool
    ) -> FetchSlice | None:
        """Whole batches from the one holding ``start_offset``, from one segment.

        Starts at the segment holding the offset and moves on to later ones
        while a segment has nothing at or after it. None when no segment has.
        """
        segment = self.floor(start_offset) or self.first
        while segment is not None:
            found = segment.read(start_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)
            if found is not None:
                if found.size == 0:
                    first, last = start_offset, start_offset - 1
                else:
                    first, last = found.first_offset, found.last_offset
                return FetchSlice(segment.file, found.position, found.size, first, last, segment.base_offset)
            segment = self.higher(segment.base_offset)
        return None

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions whose marker is at or above ``start_offset`` and
        whose first offset is below ``upper_bound_offset``, in marker order.

        The search starts at the segment holding ``start_offset`` and walks
        later ones (a transaction may be aborted segments after it began)
        until an entry shows that every transaction begun below the bound had
        ended.
        """
        found: list[AbortedTxn] = []
        for segment in self.from_offset(start_offset):
            result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
            found.extend(result.aborted)
            if result.is_complete:
                break
        return found

    def offset_for_timestamp(self, timestamp: int, log_start_offset: int) -> TimestampOffset | None:
        """The first batch at or after ``log_start_offset`` whose maxTimestamp is >= ``timestamp``."""
        for segment in self:
            if segment.max_timestamp < timestamp or segment.next_offset <= log_start_offset:
                continue
            found = segment.find_offset_by_timestamp(timestamp, log_start_offset)
            if found is not None:
                return found
        return None

    def max_timestamp_and_offset(self, log_start_offset: int) -> TimestampOffset | None:
        """The largest batch timestamp and the base offset of its batch (never below ``log_start_offset``)."""
        best: TimestampOffset | None = None
        for segment in self:
            if segment.max_timestamp >= 0 and (best is None or segment.max_timestamp > best.timestamp):
                best = TimestampOffset(segment.max_timestamp, max(segment.offset_of_max_timestamp, log_start_offset))
        return best

    def retention_candidates(self) -> list[RetentionCandidate]:
        """Every segment but the active one, oldest first, as retention weighs them."""
        ordered = list(self)
        return [
            RetentionCandidate(segment.base_offset, segment.size, segment.largest_timestamp(), successor.base_offset)
            for segment, successor in zip(ordered, ordered[1:])
        ]
