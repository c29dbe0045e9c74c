"""The sparse offset index of a segment: offset -> byte position in the ``.log``.

Byte layout: a run of 8-byte big-endian entries::

    0  relativeOffset  int32   batch base offset minus the segment's base offset
    4  position        int32   byte position of that batch in the segment's .log

Both fields strictly increase from one entry to the next. An entry is added
for a batch when more than ``index.interval.bytes`` of log were appended since
the previous entry, so the first batch of a segment (position 0) never has
one: a lookup below the first entry answers ``(base_offset, 0)``. Spate
records the batch's base offset; Kafka records its last offset. Either way
the entry leads to the start of the batch holding that offset, so a lookup
followed by a forward scan works on files written by both.

Crash behaviour: see :mod:`broker_core.storage.index_base`; the loader checks
every entry against the log and rebuilds the file from the log when it fails.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.index_base import IndexFile

_INT32_MAX = (1 << 31) - 1


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    """An offset and the byte position of the batch holding it.

    The offset is the batch's base offset in indexes Spate writes (its last
    offset in Kafka's).
    """

    offset: int
    position: int


class OffsetIndex(IndexFile):
    ENTRY = struct.Struct(">ii")

    @property
    def last_entry(self) -> OffsetPosition:
        """The last entry, or ``(base_offset, 0)`` when empty."""
        if self.entries == 0:
            return OffsetPosition(self.base_offset, 0)
        relative, position = self._last_raw()  # type: ignore[misc]
        return OffsetPosition(self.base_offset + relative, position)

    def entry(self, slot: int) -> OffsetPosition:
        relative, position = self.entry_tuple(slot)
        return OffsetPosition(self.base_offset + relative, position)

    def append(self, offset: int, position: int) -> None:
        """Add an entry; both fields must exceed the last entry's."""
        relative = offset - self.base_offset
        if not 0 <= relative <= _INT32_MAX:
            raise ValueError(f"offset {offset} does not fit an index based at {self.base_offset}")
        last = self._last_raw()
        if last is not None and (relative <= last[0] or position <= last[1]):
            raise ValueError(
                f"index entry ({offset}, {position}) does not follow the last entry "
                f"({self.base_offset + last[0]}, {last[1]})"
            )
        self._append_entry(relative, position)

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The greatest entry whose offset is <= ``target_offset``, or ``(base_offset, 0)``."""
        relative = target_offset - self.base_offset
        slot = self._largest_slot_at_most(0, relative)
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def lookup_by_position(self, position: int) -> OffsetPosition:
        """The greatest entry whose position is <= ``position``, or ``(base_offset, 0)``."""
        slot = self._largest_slot_at_most(1, position)
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def truncate_to_position(self, position: int) -> None:
        """Drop the entries of batches at or after byte ``position``."""
        self.truncate_to_entries(self._smallest_slot_at_least(1, position))

    def sanity_check(self, log_size: int) -> None:
        """Raise ``CorruptIndexError`` unless every entry fits a log of ``log_size`` bytes."""
        last_relative = -1
        last_position = 0
        for relative, position in self.iter_tuples():
            if relative <= last_relative or relative < 0:
                raise CorruptIndexError(self.path, f"relative offset {relative} does not increase")
            if position <= last_position:
                raise CorruptIndexError(self.path, f"position {position} does not increase")
            last_relative, last_position = relative, position
        if last_position >= log_size and self.entries:
            raise CorruptIndexError(
                self.path, f"entry points at position {last_position}, past the log's {log_size} bytes"
            )
