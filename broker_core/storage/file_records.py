"""A segment's ``.log`` file: record batches back to back, addressed by byte position.

Byte layout: RecordBatch v2 exactly as it travels on the wire, one batch after
another with no framing of its own; a batch's first 12 bytes (baseOffset,
batchLength) say where the next one starts. Positions are int32, so the file
never exceeds 2 GiB (the segment enforces it).

This is Kafka's ``FileRecords``: it knows bytes and batch headers, not
offsets' meaning or indexes. The segment turns offsets into a starting
position with its offset index and asks this file to walk from there.

Writes use ``pwrite`` at the end and reads ``pread``, so reads on the same
descriptor see every completed append without seeking. The descriptor is
opened on first use and may be closed while idle by the broker's
:class:`OpenFileCache`; the size is kept in memory, so closing loses nothing. A write that fails
part-way is cut off again (``ftruncate``), so the file never ends inside a
batch it reported as failed. The file is not fsynced here except by
``flush``; after a crash the segment's recovery re-validates the tail.

Not thread-safe: only the partition's single writer calls it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from broker_core.storage.batch_reader import BatchReader, pread_fully
from broker_core.storage.open_files import OpenFileCache, SegmentFile
from broker_core.storage.preallocation import reserve_space
from broker_core.storage.time_index import TimestampOffset
from spate.records.batch import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, batch_crc, validate_batch
from spate.records.errors import CorruptRecordError

# A ``crc_from_offset`` past every offset: check no batch's CRC (the data was flushed, or is rebuilt from).
NO_CRC_CHECK = (1 << 63) - 1

# Recovery reads big windows: it walks every batch of the file once.
RECOVERY_WINDOW = 1 << 20


@dataclass(frozen=True, slots=True)
class SegmentRead:
    """Whole batches of one segment: ``size`` bytes at ``position``."""

    position: int
    size: int
    first_offset: int
    last_offset: int


class FileRecords:
    """The ``.log`` file of one segment (created when absent), opened while in use."""

    def __init__(self, path: Path, open_files: OpenFileCache | None = None, preallocate_bytes: int = 0) -> None:
        """``preallocate_bytes``: disk space a new file reserves up front (``preallocate``), its size unchanged."""
        self._path = path
        # Without the broker's cache (tools, tests) the file is bounded by nothing but tracked all the same.
        self._open_files = open_files = open_files if open_files is not None else OpenFileCache()
        self._file: SegmentFile | None = None
        self._reserved = False
        try:
            self._size = os.stat(path).st_size
        except FileNotFoundError:
            # A new segment is about to be written: keep the descriptor that created it.
            self._file = SegmentFile(path, "x+")
            self._size = 0
            open_files.touch(self, 1)
            self._reserved = reserve_space(self._file.fileno(), preallocate_bytes)
        self._closed = False

    def release_reserved(self) -> None:
        """Give back the reserved space the data did not fill (the segment rolled or closes)."""
        if self._reserved:
            os.ftruncate(self._fd, self._size)
            self._reserved = False

    @property
    def _fd(self) -> int:
        return self.file.fileno()

    def close_idle(self) -> None:
        """Drop the descriptor (a slice still holding the file keeps it open until sent)."""
        self._file = None

    def release(self) -> None:
        """Drop the descriptor and its place in the cache; the next use reopens the file."""
        self._open_files.forget(self)
        self._file = None

    @property
    def path(self) -> Path:
        return self._path

    @property
    def file(self) -> BinaryIO:
        """The open file, opened again if the cache closed it."""
        file = self._file
        if file is None:
            if self._closed:
                raise ValueError(f"{self._path} is closed")
            file = self._file = SegmentFile(self._path, "r+")
            self._open_files.touch(self, 1)
        else:
            self._open_files.refresh(self)
        return file

    @property
    def is_open(self) -> bool:
        """Whether a descriptor is held right now."""
        return self._file is not None

    @property
    def size(self) -> int:
        return self._size

    def last_modified_ms(self) -> int:
        return os.stat(self._path).st_mtime_ns // 1_000_000

    # --------------------------------------------------------------- writing

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write ``data`` at the end in one go; return the position it starts at.

        On an ``OSError`` the file is cut back to its old end and the error
        propagates.
        """
        position = self._size
        written = 0
        view = memoryview(data)
        try:
            while written < len(view):
                written += os.pwrite(self._fd, view[written:], position + written)
        except OSError:
            os.ftruncate(self._fd, position)
            raise
        self._size = position + written
        return position

    def truncate_to(self, position: int) -> int:
        """Cut the file at ``position`` (a batch boundary); return the bytes removed."""
        removed = self._size - position
        if removed > 0:
            os.ftruncate(self._fd, position)
            self._size = position
        return max(removed, 0)

    def flush(self) -> None:
        os.fsync(self._fd)

    # --------------------------------------------------------------- reading

    def reader(self, *, window: int | None = None) -> BatchReader:
        # The reader holds the file object: the descriptor outlives an eviction meanwhile.
        file = self.file
        if window is None:
            return BatchReader(file.fileno(), self._size, owner=file)
        return BatchReader(file.fileno(), self._size, window=window, owner=file)

    def header_at(self, position: int) -> BatchHeader:
        """The header of the batch at ``position`` (framing not validated)."""
        return self.reader().header_at(position)

    def iter_headers(self, start_position: int = 0) -> Iterator[BatchHeader]:
        """Headers of the batches from ``start_position`` (a batch boundary) on."""
        reader = self.reader()
        position = start_position
        while position < self._size:
            header = reader.next_header(position)
            yield header
            position += header.size

    def search_for_offset(
        self, offset: int, start_position: int, reader: BatchReader | None = None
    ) -> BatchHeader | None:
        """The first batch from ``start_position`` on whose last offset is >= ``offset``, or None."""
        reader = reader or self.reader()
        position = start_position
        while position < self._size:
            header = reader.next_header(position)
            if header.last_offset >= offset:
                return header
            position += header.size
        return None

    def read(
        self,
        start_position: int,
        start_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> SegmentRead | None:
        """Whole batches from the one holding ``start_offset``, searched from ``start_position``.

        Stops before ``max_bytes`` would be exceeded (but returns one batch of
        any size when ``min_one_batch``) and before the first batch reaching
        ``max_offset``. None when no batch at or after ``start_offset`` is in
        the file; an empty read when the limits allow no batch.
        """
        reader = self.reader()
        first = self.search_for_offset(start_offset, start_position, reader)
        if first is None:
            return None
        if (max_offset is not None and first.last_offset >= max_offset) or (
            first.size > max_bytes and not min_one_batch
        ):
            return SegmentRead(first.position, 0, first.base_offset, first.base_offset - 1)
        limit = first.position + max(max_bytes, first.size)
        end = first.position + first.size
        last_offset = first.last_offset
        # No header read when not even the smallest batch would fit the budget.
        while end < self._size and limit - end >= HEADER_SIZE:
            header = reader.next_header(end)
            if end + header.size > limit or (max_offset is not None and header.last_offset >= max_offset):
                break
            end += header.size
            last_offset = header.last_offset
        return SegmentRead(first.position, end - first.position, first.base_offset, last_offset)

    def search_for_timestamp(self, timestamp: int, start_position: int, start_offset: int) -> TimestampOffset | None:
        """The first batch from ``start_position`` on, ending at or after ``start_offset``,
        whose maxTimestamp is >= ``timestamp``: its maxTimestamp and base offset
        (raised to ``start_offset`` when the batch straddles it)."""
        for header in self.iter_headers(start_position):
            if header.max_timestamp >= timestamp and header.last_offset >= start_offset:
                return TimestampOffset(header.max_timestamp, max(header.base_offset, start_offset))
        return None

    def read_bytes(self, position: int, size: int) -> bytes:
        return pread_fully(self._fd, size, position)

    def valid_batch_at(
        self, reader: BatchReader, position: int, *, crc_from_offset: int, lowest: int, highest: int
    ) -> BatchHeader | None:
        """The batch at ``position`` if it is whole, frames, and is in order, else None.

        In order: its base offset is at least ``lowest`` and its last offset
        at most ``highest``. Its CRC is checked only when its last offset is
        at or above ``crc_from_offset`` (data below it was flushed). The
        header's ``position`` is 0 (relative to the batch).
        """
        try:
            _, length = reader.offset_and_length_at(position)
            size = length + LOG_OVERHEAD
            if length < HEADER_SIZE - LOG_OVERHEAD or position + size > self._size:
                return None
            buf = reader.view(position, size)
            header = validate_batch(buf, 0, check_crc=False)
        except CorruptRecordError:
            return None
        if header.base_offset < lowest or header.last_offset > highest:
            return None
        if header.last_offset >= crc_from_offset and batch_crc(buf, 0, size) != header.crc:
            return None
        return header

    # ------------------------------------------------------------ lifecycle

    def rename_to(self, target: Path) -> None:
        """Rename the file; an open descriptor stays valid, a later open uses the new name."""
        os.replace(self._path, target)
        self._path = target

    def close(self) -> None:
        if not self._closed:
            self.release_reserved()
            self._open_files.forget(self)
            if self._file is not None:
                self._file.close()
                self._file = None
            self._closed = True

    def __repr__(self) -> str:
        return f"FileRecords({self._path.name}, size={self._size})"
