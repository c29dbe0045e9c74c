"""One segment of a partition's log: a ``.log`` file, its two indexes and the
aborted-transaction index.

The ``.log`` holds record batches exactly as they travel on the wire, back to
back, with strictly increasing offsets, the first at or above the segment's
base offset and the last within ``base_offset + 2**31 - 1`` (index entries
store offsets relative to the base as int32). Positions are int32 as well, so
a segment never exceeds 2 GiB.

The ``.log`` bytes are a :class:`FileRecords`; this class adds what offsets
mean: the indexes that turn an offset or timestamp into a position to walk
from, and the in-memory summary the log needs on every append (the next
offset, the largest batch timestamp and when the first batch arrived, for
``segment.ms``). Only the writer mutates a segment; reads use ``pread`` on the
same file and see every completed append.

A log opened after a clean shutdown makes its segments lazy: they read
their files on first use (``lazy_segment.py``). Opening a segment from disk,
trusting its indexes or re-validating its batches after a crash, is
``SegmentRecovery``'s (``segment_recovery.py``). Truncation drops the
aborted-transaction index's entries past the new end only; the partition
re-adds what its producer-state replay finds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator, Sequence

from broker_core.storage.file_records import FileRecords, SegmentRead
from broker_core.storage.files import FileKind, FileState, SegmentPaths, segment_paths
from broker_core.storage.lazy_segment import LazySegmentState
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.segment_recovery import SegmentRecovery
from broker_core.storage.time_index import TimestampOffset
from broker_core.storage.txn_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult
from spate.records.batch import NO_TIMESTAMP, BatchHeader
from spate.records.varint import INT32_MAX


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """A read-only summary of one segment."""

    base_offset: int
    next_offset: int
    size: int
    max_timestamp: int
    path: Path


class LogSegment(SegmentRecovery, LazySegmentState):
    """A segment's files, opened for reading and (while active) appending."""

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_size: int,
        created_ms: int,
        open_files: OpenFileCache | None = None,
        present: frozenset[FileKind] | None = None,
        lazy: bool = False,
        preallocate_bytes: int = 0,
    ) -> None:
        """Open (creating when absent) the segment's files; index files are created on first use.

        Descriptors are taken on first use and given back when
        ``open_files`` needs room; only a new segment's ``.log`` starts open.

        ``present`` names the segment's files a directory listing found (None:
        look on disk). A ``lazy`` segment (a log loaded after a clean shutdown,
        as Kafka's ``LazyIndex``) opens its indexes, and reads its next offset,
        largest timestamp and first batch's timestamp, only when first asked;
        the loader sets the last segment's next offset from the recovery point.

        Index files that cannot even be opened (not a whole number of entries)
        are replaced by empty ones and ``needs_index_rebuild`` is set; call
        ``load`` or ``recover`` before using the segment (a lazy segment
        rebuilds them itself when it opens them).
        """
        self.base_offset = base_offset
        self._directory = directory
        self._state = FileState.LIVE
        self._paths = segment_paths(directory, base_offset)
        self._index_interval = index_interval_bytes
        self._max_index_size = max_index_size
        self._created_ms = created_ms
        # One cache for the segment's files when none is given (tools, tests): unbounded, and freed with it.
        self._open_files = open_files = open_files if open_files is not None else OpenFileCache()
        self._log = FileRecords(self._paths.log, open_files, preallocate_bytes)
        if present is None:
            indexes_found = self._paths.index.exists() and self._paths.time_index.exists()
        else:
            indexes_found = FileKind.INDEX in present and FileKind.TIME_INDEX in present
        # A non-empty log without its index files needs them rebuilt.
        self.needs_index_rebuild = self._log.size > 0 and not indexes_found
        self._active = False
        self._bytes_since_index_entry = 0
        self._closed = False
        if lazy and not self.needs_index_rebuild:
            # txn_index, offset_index, time_index, _next_offset, _max_timestamp, _offset_of_max_timestamp
            # and _roll_base_ms are filled in on first access (``LazySegmentState``).
            return
        self.txn_index = TransactionIndex(
            self._paths.txn_index, base_offset, exists=None if present is None else FileKind.TXN_INDEX in present
        )
        self._open_indexes()
        self._next_offset = base_offset
        self._max_timestamp = NO_TIMESTAMP
        self._offset_of_max_timestamp = -1
        # When the first batch arrived, by the broker's clock: segment.ms counts from here.
        self._roll_base_ms: int | None = None

    # ------------------------------------------------------------ properties

    @property
    def size(self) -> int:
        return self._log.size

    @property
    def next_offset(self) -> int:
        """One past the last offset held, or the base offset when empty."""
        return self._next_offset

    @property
    def is_empty(self) -> bool:
        return self._log.size == 0

    @property
    def max_timestamp(self) -> int:
        """Largest batch maxTimestamp in the segment, or -1."""
        return self._max_timestamp

    @property
    def offset_of_max_timestamp(self) -> int:
        return self._offset_of_max_timestamp

    @property
    def file(self) -> BinaryIO:
        return self._log.file

    @property
    def paths(self) -> SegmentPaths:
        return self._paths

    @property
    def log_path(self) -> Path:
        return self._paths.log

    def largest_timestamp(self) -> int:
        """What retention ages the segment by: its largest batch timestamp,
        or the file's modification time when no batch carries one."""
        if self._max_timestamp >= 0:
            return self._max_timestamp
        return self._log.last_modified_ms()

    def info(self) -> SegmentInfo:
        return SegmentInfo(self.base_offset, self._next_offset, self.size, self._max_timestamp, self._paths.log)

    # --------------------------------------------------------------- writing

    def can_hold_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def should_roll(self, append_size: int, last_offset: int, now_ms: int, segment_bytes: int, segment_ms: int) -> bool:
        """Whether an append of ``append_size`` bytes ending at ``last_offset`` needs a new segment.

        It does when the bytes would pass ``segment.bytes`` (or 2 GiB), the
        segment is older than ``segment.ms`` (``time_waited_for_roll``), an
        index is full, or the offset does not fit the int32 relative offsets.
        """
        full = self.size + append_size > segment_bytes or self.size + append_size > INT32_MAX
        aged = not self.is_empty and self.time_waited_for_roll(now_ms) > segment_ms
        return full or aged or self.indexes_full() or not self.can_hold_offset(last_offset)

    def time_waited_for_roll(self, now_ms: int) -> int:
        """Milliseconds since the first batch was appended (0 while empty).

        Measured on the broker's clock, so producer timestamps far in the
        past cannot force a roll per append. A segment loaded from disk
        counts from its first batch's timestamp, but never from later than
        the moment it was opened.
        """
        if self._roll_base_ms is None:
            return 0
        return now_ms - self._roll_base_ms

    def append(
        self, data: bytes | bytearray | memoryview, headers: Sequence[BatchHeader], *, now_ms: int | None = None
    ) -> int:
        """Write validated, stamped batches at the end; return their position.

        ``headers`` describe the batches of ``data`` with positions relative
        to ``data``. The bytes go out in one write before any index changes,
        so a failed write leaves the indexes describing the old end.
        """
        if self.size + len(data) > INT32_MAX:
            raise ValueError(f"segment {self._paths.log} would exceed 2 GiB")
        if headers and not self.can_hold_offset(headers[-1].last_offset):
            raise ValueError(f"offset {headers[-1].last_offset} does not fit segment {self.base_offset}")
        position = self._log.append(data)
        if self._roll_base_ms is None and headers:
            self._roll_base_ms = self._created_ms if now_ms is None else now_ms
        for header in headers:
            self._index_batch(
                header.base_offset, header.last_offset, header.max_timestamp, position + header.position, header.size
            )
        return position

    def _index_batch(self, base_offset: int, last_offset: int, max_timestamp: int, position: int, size: int) -> None:
        if max_timestamp > self._max_timestamp:
            self._max_timestamp = max_timestamp
            self._offset_of_max_timestamp = base_offset
        # A full index stays correct, only sparser: the log rolls before the
        # next append, but one append may carry several batches.
        if self._bytes_since_index_entry > self._index_interval and not self.offset_index.is_full:
            self.offset_index.append(base_offset, position)
            if not self.time_index.is_full:
                self.time_index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp)
            self._bytes_since_index_entry = 0
        self._bytes_since_index_entry += size
        self._next_offset = last_offset + 1

    def indexes_full(self) -> bool:
        return self.offset_index.is_full or self.time_index.is_full

    def activate(self) -> None:
        """Make the segment the log's active one: indexes preallocated for appends."""
        self._active = True
        if self.indexes_opened:  # a lazy segment activates them when it opens them
            self.offset_index.activate()
            self.time_index.activate()

    def on_become_inactive(self) -> None:
        """Record the segment's largest timestamp in the time index and trim both indexes."""
        self._active = False
        self._log.release_reserved()
        index = self.time_index
        if self._max_timestamp > index.last_entry.timestamp and index.entries < index.max_entries:
            index.activate()
            index.maybe_append(self._max_timestamp, self._offset_of_max_timestamp, final=True)
        if self._log.size > 0:
            # A reopen takes a non-empty log without index files for one to rebuild.
            self.offset_index.create_if_missing()
            self.time_index.create_if_missing()
        self.offset_index.trim()
        self.time_index.trim()

    def set_index_interval(self, index_interval_bytes: int) -> None:
        self._index_interval = index_interval_bytes

    def resize_indexes(self, max_index_size: int) -> None:
        self.offset_index.resize(max_index_size)
        self.time_index.resize(max_index_size)

    # --------------------------------------------------------------- reading

    def iter_headers(self, start_position: int = 0) -> Iterator[BatchHeader]:
        """Headers of the batches from ``start_position`` (a batch boundary) on."""
        return self._log.iter_headers(start_position)

    def translate_offset(self, offset: int) -> BatchHeader | None:
        """The first batch whose last offset is >= ``offset``, or None."""
        # The index gives a batch at or before the target; a short walk finds it.
        return self._log.search_for_offset(offset, self.offset_index.lookup(offset).position)

    def read(
        self,
        start_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> SegmentRead | None:
        """Whole batches from the one holding ``start_offset``.

        Stops before ``max_bytes`` would be exceeded (but returns one batch of
        any size when ``min_one_batch``) and before the first batch reaching
        ``max_offset``. None when no batch at or after ``start_offset`` is in
        this segment; an empty read when the limits allow no batch.
        """
        position = self.offset_index.lookup(start_offset).position
        return self._log.read(position, start_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)

    def read_bytes(self, position: int, size: int) -> bytes:
        return self._log.read_bytes(position, size)

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> TimestampOffset | None:
        """The first batch at or after ``start_offset`` whose maxTimestamp is >= ``timestamp``.

        Answers at batch granularity: the batch's maxTimestamp and its base
        offset (raised to ``start_offset`` when the batch straddles it).
        """
        entry = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(entry.offset, start_offset)).position
        return self._log.search_for_timestamp(timestamp, position, start_offset)

    # ------------------------------------------------- aborted transactions

    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        """Index an aborted transaction whose marker is in this segment."""
        if not self.base_offset <= txn.last_offset < self._next_offset:
            raise ValueError(
                f"abort marker at {txn.last_offset} is not in segment {self.base_offset}..{self._next_offset - 1}"
            )
        self.txn_index.append(txn)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted(fetch_offset, upper_bound_offset)

    # ------------------------------------------------------------ truncation

    def truncate_to(self, offset: int) -> int:
        """Drop every batch whose last offset is >= ``offset``; return bytes removed.

        A batch straddling ``offset`` goes as a whole, so the segment may end
        below ``offset``.
        """
        header = self.translate_offset(offset)
        if header is None:
            return 0
        position = header.position
        removed = self._log.truncate_to(position)
        # Offsets between the last kept batch and ``offset`` may be a gap left
        # by compaction; the log then ends at ``offset`` itself.
        self._next_offset = max(self.base_offset, min(header.base_offset, offset))
        self.offset_index.truncate_to_position(position)
        self.time_index.truncate_to(self._next_offset)
        self.txn_index.truncate_to(self._next_offset)
        self._bytes_since_index_entry = 0
        if position == 0:
            self._roll_base_ms = None
            self._max_timestamp = NO_TIMESTAMP
            self._offset_of_max_timestamp = -1
        else:
            self.refresh_max_timestamp()
        return removed

    # ------------------------------------------------------------ lifecycle

    def flush(self) -> None:
        """fsync the log and its indexes."""
        self._log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def rename_to(self, state: FileState) -> None:
        """Rename every file of the segment into ``state``; open handles stay valid."""
        target = segment_paths(self._directory, self.base_offset, state)
        self._log.rename_to(target.log)
        self.offset_index.rename(target.index)
        self.time_index.rename(target.time_index)
        self.txn_index.rename(target.txn_index)
        self._paths = target
        self._state = state

    @property
    def state(self) -> FileState:
        return self._state

    def release_indexes(self) -> None:
        """Unmap the indexes of a segment that is not being written; lookups remap."""
        if self.indexes_opened:
            self.offset_index.release()
            self.time_index.release()

    def release_files(self) -> None:
        """Give every descriptor of the segment back to the cache; the next use reopens them."""
        self.release_indexes()
        self._log.release()

    def close(self) -> None:
        """Close the files; an active segment becomes inactive first."""
        if self._closed:
            return
        # A lazy segment nobody used is as its last close left it: nothing to record or trim.
        if self._state is FileState.LIVE and self.indexes_opened:
            self.on_become_inactive()
        self.release_indexes()
        self.txn_index.close()
        self._log.close()
        self._closed = True

    def close_handles(self) -> None:
        """Close the files without touching them on disk."""
        self.release_indexes()
        self.txn_index.close()
        if not self._closed:
            self._log.close()
            self._closed = True

    def delete_files(self) -> None:
        """Close and remove every file of the segment."""
        self.close_handles()
        for path in self._paths.all():
            path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"LogSegment(base={self.base_offset}, size={self.size}, next={self._next_offset})"
