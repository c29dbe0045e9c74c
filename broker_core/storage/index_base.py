"""Shared machinery of the sparse, fixed-entry, memory-mapped segment indexes.

An index file is an array of fixed-size big-endian entries, sorted by both of
their fields. From the first write of its active segment's entries, the file
is preallocated to the largest size the config allows (``segment.index.bytes``
rounded down to a whole entry) and the unused tail is zeros; when the segment rolls or the log closes,
the file is trimmed to its real entries. Lookups binary-search a read-only
use of a memory map; appends and truncations go through ``pwrite``, which
the map sees (one page cache). Writing through the map would make the first
store to each page of the sparse preallocated file a page fault that
allocates the block on the spot (~1.7 ms on ext4, on the event loop);
``pwrite`` defers the allocation to writeback (a few microseconds).

The file itself is created, and preallocated, lazily (as Kafka's
``LazyIndex`` creates it): when the first entries after activation are
written (or by :meth:`IndexFile.create_if_missing`, when a segment that holds
data becomes inactive). A new log's indexes therefore cost no file
creation until they index something, which keeps the creation of thousands
of partitions cheap; a missing file reads as an index without entries, and
a segment holding data whose index files are missing has them rebuilt.

Appended entries wait in memory, up to :data:`PENDING_ENTRIES` of them, and
are written together: when that many are pending, before any lookup reads
the file, and on flush, trim and close. With thousands of partitions each
taking a few batches, an append then neither creates nor reopens index
files (the open-file cache evicts them between appends): a log's first
entries cost no file creation on the produce path.

The file and the map are opened on first use and closed again when the
broker's :class:`OpenFileCache` needs room (an index then counts as two
descriptors, the map holding its own).

Crash behaviour: an index is a cache of facts derivable from the ``.log``.
Its writes reach disk whenever the OS writes the pages back (or on flush), so
after a crash an index may miss recent entries (pending ones too, which a
flush writes before it fsyncs) or still be preallocated. On
open, the entries are counted without reading the file: a file whose last
entry is not zero (a trimmed index) holds that many entries; otherwise the
boundary between entries and the all-zero preallocated tail is found by
bisection, reading a few entries, never the tail. What does not check out (a
size that is not a whole number of entries, entries out of order, positions
past the end of the log) raises ``CorruptIndexError`` and the loader rebuilds
the index from the log. Segments after the recovery point are rebuilt anyway,
so only trimmed (flushed) indexes are ever trusted.

Thread-safety: none; an index belongs to its segment's single writer.
"""

from __future__ import annotations

import bisect
import mmap
import os
import struct
from array import array
from pathlib import Path
from typing import ClassVar, Iterator

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.open_files import OpenFileCache, SegmentFile

# Every SUMMARY_STRIDE-th entry's first field is kept in memory so that a
# lookup bisects in C down to a short run of entries, whatever the index size.
SUMMARY_STRIDE = 32

# Entries appended but not yet written; written together once this many are pending (see the module docstring).
PENDING_ENTRIES = 32


class IndexFile:
    """A sparse index file of ``ENTRY.size``-byte entries for one segment.

    ``max_index_size`` bounds the file; ``is_full`` tells the segment to roll.
    Subclasses define the entry layout and the lookups.
    """

    ENTRY: ClassVar[struct.Struct]

    def __init__(
        self, path: Path, base_offset: int, max_index_size: int, open_files: OpenFileCache | None = None
    ) -> None:
        entry_size = self.ENTRY.size
        if max_index_size < entry_size:
            raise ValueError(f"max index size {max_index_size} is below one entry ({entry_size} bytes)")
        self._path = path
        self._base_offset = base_offset
        self._max_size = max_index_size - max_index_size % entry_size
        self._open_files = open_files if open_files is not None else OpenFileCache()
        self._file: SegmentFile | None = None
        self._mmap: mmap.mmap | None = None
        self._entries = 0
        self._active = False
        self._summary: array | None = None
        # The last entry's fields, kept so appends need no read (None: read it when asked).
        self._last: tuple[int, ...] | None = None
        # Written since the last fsync.
        self._dirty = False
        # Packed entries counted in ``_entries`` but not written yet: the last ones.
        self._pending = bytearray()
        try:
            self._length = os.stat(path).st_size  # one call answers both: whether it exists, and its size
            self._exists = True
        except FileNotFoundError:
            self._length = 0
            self._exists = False
        if self._exists:
            self._entries = self._count_entries()

    # ----------------------------------------------------------------- state

    @property
    def path(self) -> Path:
        return self._path

    @property
    def base_offset(self) -> int:
        return self._base_offset

    @property
    def exists(self) -> bool:
        """Whether the file was created (see the module docstring)."""
        return self._exists

    @property
    def entries(self) -> int:
        return self._entries

    @property
    def max_entries(self) -> int:
        return self._max_size // self.ENTRY.size

    @property
    def max_index_size(self) -> int:
        return self._max_size

    @property
    def size_in_bytes(self) -> int:
        """Bytes of real entries (the file may be longer while active)."""
        return self._entries * self.ENTRY.size

    @property
    def is_full(self) -> bool:
        return self._entries >= self.max_entries

    def entry_tuple(self, slot: int) -> tuple[int, ...]:
        """The raw fields of entry ``slot`` (``0 <= slot < entries``)."""
        if not 0 <= slot < self._entries:
            raise IndexError(f"slot {slot} outside index of {self._entries} entries")
        return self.ENTRY.unpack_from(self._map(), slot * self.ENTRY.size)

    def iter_tuples(self) -> Iterator[tuple[int, ...]]:
        if self._entries == 0:
            return iter(())
        # A copy: the map may be closed (cache eviction) while the caller iterates.
        return self.ENTRY.iter_unpack(self._map()[: self.size_in_bytes])

    # ------------------------------------------------------------- mutation

    def activate(self) -> None:
        """Take appends from now on; the file is preallocated to its maximum size by the first one."""
        self._active = True

    def create_if_missing(self) -> None:
        """Create the (empty) file now, so that a reopen finds it."""
        if not self._exists:
            self._descriptor()

    def trim(self) -> None:
        """Shrink the file to its real entries; the segment takes no more appends."""
        self.write_pending()
        if not self._exists or self._file_length() == self.size_in_bytes:
            self._active = False
            return
        self._set_file_length(self.size_in_bytes)
        self._active = False

    def resize(self, max_index_size: int) -> None:
        """Change the bound (a config change on the active segment)."""
        entry_size = self.ENTRY.size
        # Never below the entries already held; the index then reports full.
        new_max = max(max_index_size - max_index_size % entry_size, self.size_in_bytes)
        self.write_pending()
        preallocated = self._active and self._length > self.size_in_bytes
        self._max_size = new_max
        if preallocated:
            self._set_file_length(new_max)

    def truncate_to_entries(self, entries: int) -> None:
        """Keep the first ``entries`` entries; zero the rest so a reopen agrees."""
        if not 0 <= entries <= self._entries:
            raise ValueError(f"cannot truncate index of {self._entries} entries to {entries}")
        if entries == self._entries:
            return
        self.write_pending()
        start = entries * self.ENTRY.size
        self._pwrite(bytes(self.size_in_bytes - start), start)
        self._entries = entries
        self._last = None
        if self._summary is not None:
            del self._summary[-(-entries // SUMMARY_STRIDE) :]
        if not self._active:
            self._set_file_length(self.size_in_bytes)

    def reset(self) -> None:
        self.truncate_to_entries(0)

    def _append_entry(self, *fields: int) -> None:
        if not self._active:
            raise ValueError(f"index {self._path} is not active; it takes no appends")
        if self.is_full:
            raise ValueError(f"index {self._path} is full ({self._entries} entries)")
        self._append_unchecked(*fields)

    def _append_unchecked(self, *fields: int) -> None:
        # Called directly only for the time index's reserved last slot.
        entry_size = self.ENTRY.size
        if (self._entries + 1) * entry_size > max(self._max_size, self._length):
            raise ValueError(f"index {self._path} has no room for another entry")
        self._pending += self.ENTRY.pack(*fields)
        self._last = fields
        if self._summary is not None and self._entries % SUMMARY_STRIDE == 0:
            self._summary.append(fields[0])
        self._entries += 1
        if len(self._pending) >= PENDING_ENTRIES * entry_size:
            self.write_pending()

    def write_pending(self) -> None:
        """Write the entries appended since the last write (creating and preallocating the file if needed)."""
        pending = self._pending
        if not pending:
            return
        end = self._entries * self.ENTRY.size
        if self._active and self._length < self._max_size:
            self._set_file_length(self._max_size)
        elif self._length < end:
            self._set_file_length(end)
        self._pending = bytearray()
        self._pwrite(bytes(pending), end - len(pending))

    def flush(self) -> None:
        """Write pending entries and fsync the file (every write went through ``pwrite``; the map is never
        written)."""
        self.write_pending()
        if self._dirty:
            os.fsync(self._descriptor())
            self._dirty = False

    def release(self) -> None:
        """Unmap and close the file (and drop the summary); the next lookup maps it again."""
        self._summary = None
        self._open_files.forget(self)
        self._close_handles()

    def close_idle(self) -> None:
        """Unmap and close (the cache needs the descriptors); the summary stays."""
        self._close_handles()

    @property
    def is_open(self) -> bool:
        return self._file is not None or self._mmap is not None

    def _close_handles(self) -> None:
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self) -> None:
        """Write pending entries, trim to the real entries and release."""
        if self._pending or (self._exists and self._path.exists()):
            self.trim()
        self.release()

    def rename(self, new_path: Path) -> None:
        """Move the file; an existing mapping stays valid."""
        if self._exists:
            os.replace(self._path, new_path)
        self._path = new_path

    def delete(self) -> None:
        self._pending = bytearray()
        self.release()
        self._path.unlink(missing_ok=True)
        self._exists = False

    # ----------------------------------------------------------- searching

    # The two searches run on every fetch; they read the map directly.

    def _largest_slot_at_most(self, field: int, target: int) -> int:
        """Slot of the greatest entry whose ``field`` <= target, or -1 if none."""
        if self._entries == 0:
            return -1
        mm = self._map()
        unpack = self.ENTRY.unpack_from
        size = self.ENTRY.size
        low, high = 0, self._entries - 1
        if field == 0:
            bucket = bisect.bisect_right(self._summary_of_keys(), target) - 1
            if bucket < 0:
                return -1
            low = bucket * SUMMARY_STRIDE
            high = min(high, low + SUMMARY_STRIDE - 1)
        found = -1
        while low <= high:
            mid = (low + high) >> 1
            if unpack(mm, mid * size)[field] <= target:
                found = mid
                low = mid + 1
            else:
                high = mid - 1
        return found

    def _summary_of_keys(self) -> array:
        if self._summary is None:
            mm = self._map()
            unpack = self.ENTRY.unpack_from
            step = SUMMARY_STRIDE * self.ENTRY.size
            self._summary = array("q", (unpack(mm, p)[0] for p in range(0, self.size_in_bytes, step)))
        return self._summary

    def _smallest_slot_at_least(self, field: int, target: int) -> int:
        """Slot of the first entry whose ``field`` >= target, or ``entries`` if none."""
        if self._entries == 0:
            return 0
        mm = self._map()
        unpack = self.ENTRY.unpack_from
        size = self.ENTRY.size
        low, high = 0, self._entries
        while low < high:
            mid = (low + high) >> 1
            if unpack(mm, mid * size)[field] < target:
                low = mid + 1
            else:
                high = mid
        return low

    # ---------------------------------------------------------------- files

    def _map(self) -> mmap.mmap:
        if self._pending:  # readers see every entry
            self.write_pending()
        mm = self._mmap
        if mm is None:
            length = self._file_length()
            if length == 0:
                raise ValueError(f"index {self._path} is empty; there is nothing to map")
            mm = self._mmap = mmap.mmap(self._descriptor(), length, access=mmap.ACCESS_READ)
            self._open_files.touch(self, self._descriptors_held())
        else:
            self._open_files.refresh(self)
        return mm

    def _descriptor(self) -> int:
        file = self._file
        if file is None:
            file = self._file = SegmentFile(self._path, "r+" if self._exists else "x+")
            self._exists = True
            self._open_files.touch(self, self._descriptors_held())
        else:
            self._open_files.refresh(self)
        return file.fileno()

    def _descriptors_held(self) -> int:
        return (self._file is not None) + (self._mmap is not None)

    def _pwrite(self, data: bytes, position: int) -> None:
        fd = self._descriptor()
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], position + written)
        self._dirty = True

    def _file_length(self) -> int:
        # Kept in memory: only this object changes the file's length.
        return self._length

    def _last_raw(self) -> tuple[int, ...] | None:
        """The raw fields of the last entry, or None when empty (no bounds checks: hot path)."""
        if self._entries == 0:
            return None
        last = self._last
        if last is None:
            last = self._last = self.ENTRY.unpack_from(self._map(), (self._entries - 1) * self.ENTRY.size)
        return last

    def _set_file_length(self, length: int) -> None:
        if self._mmap is not None:
            # A map must not outlive the end of its file; the next lookup maps the new length.
            self._mmap.close()
            self._mmap = None
            self._open_files.touch(self, self._descriptors_held())
        os.ftruncate(self._descriptor(), length)
        self._length = length
        self._dirty = True

    def _count_entries(self) -> int:
        """Entries before the preallocated all-zero tail, read in O(log n) entries; raises if malformed."""
        entry_size = self.ENTRY.size
        length = self._length
        if length % entry_size:
            raise CorruptIndexError(self._path, f"size {length} is not a multiple of the entry size {entry_size}")
        if length > self._max_size:
            # A config change lowered segment.index.bytes; the index keeps its entries.
            self._max_size = length
        if length == 0:
            return 0
        zero_entry = bytes(entry_size)
        count = length // entry_size
        with open(self._path, "rb", buffering=0) as f:
            fd = f.fileno()

            def is_zero(slot: int) -> bool:
                return os.pread(fd, entry_size, slot * entry_size) == zero_entry

            if not is_zero(count - 1):
                return count  # trimmed: every slot is an entry
            # Entries first, zeros after: bisect for the first zero slot.
            low, high = 0, count - 1
            while low < high:
                mid = (low + high) >> 1
                if is_zero(mid):
                    high = mid
                else:
                    low = mid + 1
            return low

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._path.name}, entries={self._entries})"

