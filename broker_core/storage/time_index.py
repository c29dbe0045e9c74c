"""The sparse time index of a segment: timestamp -> offset.

Byte layout: a run of 12-byte big-endian entries::

    0  timestamp       int64   largest batch maxTimestamp seen so far in the segment
    8  relativeOffset  int32   base offset of the batch that carried it, minus the
                               segment's base offset

Timestamps strictly increase and offsets never decrease from entry to entry.
An entry is considered each time the offset index gains one, and once more
when the segment stops being active, so the last entry of a closed segment
holds the segment's largest timestamp. One slot is kept free for that final
entry: the index reports full one entry early.

Meaning of an entry ``(t, o)``: no batch before the batch at ``o`` has a
timestamp above ``t``. A search for the first batch at or after a timestamp
``T`` can therefore start at the batch of the greatest entry with ``t <= T``.

Crash behaviour: see :mod:`broker_core.storage.index_base`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.index_base import IndexFile
from spate.records.batch import NO_TIMESTAMP

_INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A timestamp and an offset (also the answer of a timestamp lookup)."""

    timestamp: int
    offset: int


class TimeIndex(IndexFile):
    ENTRY = struct.Struct(">qi")

    @property
    def is_full(self) -> bool:
        # The last slot is reserved for the entry written when the segment rolls.
        return self.entries >= self.max_entries - 1

    @property
    def last_entry(self) -> TimestampOffset:
        """The last entry, or ``(NO_TIMESTAMP, base_offset)`` when empty."""
        if self.entries == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        timestamp, relative = self._last_raw()  # type: ignore[misc]
        return TimestampOffset(timestamp, self.base_offset + relative)

    def entry(self, slot: int) -> TimestampOffset:
        timestamp, relative = self.entry_tuple(slot)
        return TimestampOffset(timestamp, self.base_offset + relative)

    def maybe_append(self, timestamp: int, offset: int, *, final: bool = False) -> bool:
        """Add ``(timestamp, offset)`` if ``timestamp`` is above the last entry's.

        ``final`` marks the entry written when the segment stops being
        active; it may use the reserved last slot. Returns whether an entry
        was added.
        """
        relative = offset - self.base_offset
        last = self._last_raw()
        if last is not None:
            if timestamp <= last[0]:
                return False
            if relative < last[1]:
                raise ValueError(f"time index offset {offset} goes back from {self.base_offset + last[1]}")
        elif timestamp <= NO_TIMESTAMP:
            return False
        if not 0 <= relative <= _INT32_MAX:
            raise ValueError(f"offset {offset} does not fit an index based at {self.base_offset}")
        if final:
            self._append_unchecked(timestamp, relative)
        else:
            self._append_entry(timestamp, relative)
        return True

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The greatest entry whose timestamp is <= target, or ``(NO_TIMESTAMP, base_offset)``."""
        slot = self._largest_slot_at_most(0, target_timestamp)
        if slot < 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(slot)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries whose offset is >= ``offset``."""
        relative = offset - self.base_offset
        self.truncate_to_entries(self._smallest_slot_at_least(1, relative))

    def sanity_check(self, next_offset: int) -> None:
        """Raise ``CorruptIndexError`` unless the entries are ordered and below ``next_offset``."""
        last_timestamp = NO_TIMESTAMP
        last_relative = 0
        for timestamp, relative in self.iter_tuples():
            if timestamp <= last_timestamp:
                raise CorruptIndexError(self.path, f"timestamp {timestamp} does not increase")
            if relative < last_relative:
                raise CorruptIndexError(self.path, f"relative offset {relative} goes back")
            last_timestamp, last_relative = timestamp, relative
        if self.entries and self.base_offset + last_relative >= next_offset:
            raise CorruptIndexError(
                self.path, f"entry names offset {self.base_offset + last_relative}, past the log's end {next_offset}"
            )
