"""Opening a segment from disk: trusting its indexes (``load``) or re-validating its batches (``recover``).

Crash behaviour: the ``.log`` is the truth. Appends write the bytes first and
index them afterwards, so after a crash the indexes may describe less than
the log, or (torn writes) more. ``load`` trusts a segment below the recovery
point: it checks the indexes against the log and frames the batches after
the last index entry, and raises ``CorruptIndexError`` / ``CorruptRecordError``
when they do not fit. ``recover`` re-validates batches from the start of the
segment and rebuilds both indexes, truncating at the first batch that is
torn, fails its CRC, or breaks offset order. The aborted-transaction index
cannot be rebuilt from the segment alone (it needs producer state); recovery
only drops its entries past the new end, and the partition re-adds what its
producer-state replay finds.

``SegmentRecovery`` is mixed into ``LogSegment``, which provides the
attributes declared here and ``_index_batch`` (the indexing an append does
too, so recovery replays through the same path).
"""

from __future__ import annotations

import functools
from typing import Callable, Iterator

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.file_records import RECOVERY_WINDOW, FileRecords
from broker_core.storage.files import SegmentPaths
from broker_core.storage.offset_index import OffsetIndex
from broker_core.storage.time_index import TimeIndex
from broker_core.storage.txn_index import TransactionIndex
from spate.records.batch import HEADER_SIZE, NO_TIMESTAMP, BatchHeader
from spate.records.errors import CorruptRecordError
from spate.records.varint import INT32_MAX


class SegmentRecovery:
    """Loading and recovery of one ``LogSegment``."""

    # The segment's state, set by ``LogSegment.__init__`` (a lazy segment's on first use). Annotations
    # only: a class attribute would hide the lazy segment's ``__getattr__``.
    base_offset: int
    needs_index_rebuild: bool
    offset_index: OffsetIndex
    time_index: TimeIndex
    txn_index: TransactionIndex
    _paths: SegmentPaths
    _log: FileRecords
    _created_ms: int
    _next_offset: int
    _max_timestamp: int
    _offset_of_max_timestamp: int
    _bytes_since_index_entry: int
    _roll_base_ms: int | None
    size: int
    activate: Callable[[], None]
    can_hold_offset: Callable[[int], bool]
    iter_headers: Callable[[int], Iterator[BatchHeader]]
    _index_batch: Callable[[int, int, int, int, int], None]

    def load(self) -> None:
        """Trust the log and take the in-memory state from the indexes.

        Raises ``CorruptIndexError`` when an index does not fit the log, and
        ``CorruptRecordError`` when the batches after the last index entry do
        not frame; the caller then recovers the segment instead.
        """
        if self.needs_index_rebuild:
            raise CorruptIndexError(self._paths.index, "index files had to be recreated")
        self.offset_index.sanity_check(self.size)
        last = self.offset_index.last_entry
        next_offset = self.base_offset
        previous_last = self.base_offset - 1
        for header in self.iter_headers(last.position):
            at_last_entry = header.position == last.position and self.offset_index.entries
            if at_last_entry and not header.base_offset <= last.offset <= header.last_offset:
                raise CorruptIndexError(
                    self._paths.index,
                    f"last entry names offset {last.offset}, the batch there holds "
                    f"{header.base_offset}..{header.last_offset}",
                )
            if header.base_offset <= previous_last or not self.can_hold_offset(header.last_offset):
                raise CorruptRecordError(f"offsets go back at position {header.position} of {self._paths.log}")
            previous_last = header.last_offset
            next_offset = header.next_offset
        self._next_offset = next_offset
        self.time_index.sanity_check(self._next_offset)
        final = self.time_index.last_entry
        self._max_timestamp = final.timestamp
        self._offset_of_max_timestamp = final.offset if final.timestamp >= 0 else -1
        self._roll_base_ms = self._loaded_roll_base()
        self._bytes_since_index_entry = 0

    def trust_next_offset(self, next_offset: int) -> None:
        """Take the next offset from the log's checkpoint instead of reading it (a clean shutdown's last
        segment; see the loader)."""
        self._next_offset = next_offset

    def refresh_max_timestamp(self) -> None:
        """Recompute the largest timestamp exactly, reading only the batches the
        time index does not cover (those from its last entry's batch on)."""
        last = self.time_index.last_entry
        if last.timestamp >= 0:
            max_ts, offset_of_max = last.timestamp, last.offset
            position = self.offset_index.lookup(last.offset).position
        else:
            max_ts, offset_of_max = NO_TIMESTAMP, -1
            position = 0
        for header in self.iter_headers(position):
            if header.max_timestamp > max_ts:
                max_ts, offset_of_max = header.max_timestamp, header.base_offset
        self._max_timestamp = max_ts
        self._offset_of_max_timestamp = offset_of_max

    def _loaded_roll_base(self) -> int | None:
        if self.size < HEADER_SIZE:
            return None
        return self._roll_base_from(self._log.header_at(0).max_timestamp)

    def _roll_base_from(self, first_timestamp: int | None) -> int | None:
        """When ``segment.ms`` counts from, given the first batch's timestamp (None: no batch)."""
        if first_timestamp is None:
            return None
        if first_timestamp < 0:
            return self._created_ms
        return min(first_timestamp, self._created_ms)

    def recover(
        self, *, crc_from_offset: int = 0, min_base_offset: int | None = None,
        on_batch: Callable[[BatchHeader, Callable[[], bytes]], None] | None = None,
    ) -> int:
        """Re-validate the batches and rebuild both indexes; return bytes truncated.

        Batches whose last offset is below ``crc_from_offset`` (already
        flushed) are checked for framing and order only; the rest also for
        their CRC. The segment is cut at the first batch that is torn,
        corrupt, below ``min_base_offset`` or not strictly after the previous
        one. ``on_batch`` sees each batch kept, with a way to read its bytes.
        """
        # Active first: an active index is reset by zeroing its entries, not by cutting the file (an
        # ftruncate costs up to a millisecond, per index of each of thousands of logs recovered).
        self.activate()
        self.offset_index.reset()
        self.time_index.reset()
        self._max_timestamp = NO_TIMESTAMP
        self._offset_of_max_timestamp = -1
        self._bytes_since_index_entry = 0
        self._next_offset = self.base_offset
        lowest = self.base_offset if min_base_offset is None else max(self.base_offset, min_base_offset)
        highest = self.base_offset + INT32_MAX
        reader = self._log.reader(window=RECOVERY_WINDOW)
        position = 0
        first_timestamp: int | None = None
        while position < self.size:
            header = self._log.valid_batch_at(
                reader, position, crc_from_offset=crc_from_offset, lowest=lowest, highest=highest
            )
            if header is None:
                break
            if first_timestamp is None:
                first_timestamp = header.max_timestamp
            if on_batch is not None:
                on_batch(header, functools.partial(self._log.read_bytes, position, header.size))
            self._index_batch(header.base_offset, header.last_offset, header.max_timestamp, position, header.size)
            lowest = header.next_offset
            position += header.size
        truncated = self._log.truncate_to(position)
        self.txn_index.truncate_to(self._next_offset)
        self._roll_base_ms = self._roll_base_from(first_timestamp)
        return truncated
