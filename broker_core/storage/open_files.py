"""The broker-wide bound on open segment files: descriptors opened on use, closed when idle.

Kafka keeps every segment's ``.log``, ``.index`` and ``.timeindex`` open (and
the indexes mapped) for as long as the log exists, so a broker's descriptor
count grows with partitions times segments and operators raise
``ulimit -n`` to match. Spate opens a segment's files when they are first
read or written and keeps the most recently used ones open: an
:class:`OpenFileCache` counts the descriptors held by every
:class:`FileRecords` and :class:`IndexFile` of the broker and, past its
``capacity``, closes the least recently used holders (they reopen on their
next use, from the path they know). 10,000 partitions thus fit in a bounded
number of descriptors; a partition that is written again after its files
were closed pays an ``open`` (a few microseconds).

A closed holder only drops its reference to the file object. The file is
a :class:`SegmentFile`, which CPython closes as soon as the last reference
goes: a :class:`FetchSlice` handed to a connection holds its file, so a range
being sent with ``sendfile`` stays valid until the slice is dropped, even if
the cache closed its segment meanwhile. Such files are no longer counted;
there are at most as many as fetch responses in flight.

Thread-safety: storage is driven by one thread (the event loop), and holders
touch the cache on that thread only, except while the log manager closes logs
in parallel at shutdown: :meth:`OpenFileCache.stop_evicting` first makes the
cache count under a lock and close nothing (each closing log releases its own
descriptors), so one thread never closes a file another is fsyncing.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import Protocol

# Below this the files of one operation (a segment's log and two indexes,
# read while the next segment is opened) could evict one another.
MIN_CAPACITY = 16


class SegmentFile(io.FileIO):
    """An unbuffered segment file that closes quietly when its last reference goes."""

    def __del__(self) -> None:
        if not self.closed:
            io.FileIO.close(self)


class FileHolder(Protocol):
    """Something holding open descriptors that it can close and later reopen."""

    def close_idle(self) -> None:
        """Close the descriptors; the next use reopens them."""


class OpenFileCache:
    """A least-recently-used bound on the descriptors of every holder registered.

    ``capacity`` None means no bound (Kafka's behaviour): holders are still
    tracked, so ``open_descriptors`` stays meaningful.
    """

    def __init__(self, capacity: int | None = None) -> None:
        if capacity is not None and capacity < MIN_CAPACITY:
            raise ValueError(f"the open segment file cap must be at least {MIN_CAPACITY}, not {capacity}")
        self._capacity = capacity
        self._holders: OrderedDict[int, tuple[FileHolder, int]] = OrderedDict()
        self._open = 0
        self.evictions = 0
        self._lock: threading.Lock | None = None

    @property
    def capacity(self) -> int | None:
        return self._capacity

    @property
    def open_descriptors(self) -> int:
        """Descriptors held by the registered holders (files still held by a slice not counted)."""
        return self._open

    def __len__(self) -> int:
        return len(self._holders)

    def __contains__(self, holder: object) -> bool:
        return id(holder) in self._holders

    def stop_evicting(self) -> None:
        """From now on close nothing and count under a lock: several threads close their own logs.

        The descriptors open stay within the capacity plus the files of the logs being closed at once.
        """
        self._lock = threading.Lock()

    def resume_evicting(self) -> None:
        """Back to one thread: evict again, down to the capacity now."""
        self._lock = None
        if self._capacity is not None and self._open > self._capacity:
            self._evict(-1)

    def touch(self, holder: FileHolder, descriptors: int) -> None:
        """``holder`` is in use and holds ``descriptors`` open; close others while over capacity."""
        if self._lock is not None:
            with self._lock:
                self._count(holder, descriptors)
            return
        self._count(holder, descriptors)
        if self._capacity is not None and self._open > self._capacity:
            self._evict(id(holder))

    def _count(self, holder: FileHolder, descriptors: int) -> None:
        key = id(holder)
        previous = self._holders.get(key)
        if previous is None:
            self._holders[key] = (holder, descriptors)
        else:
            self._holders.move_to_end(key)
            if previous[1] != descriptors:
                self._holders[key] = (holder, descriptors)
        self._open += descriptors - (previous[1] if previous else 0)

    def refresh(self, holder: FileHolder) -> None:
        """Mark ``holder`` (registered) most recently used: the hot path of every read and append."""
        key = id(holder)
        if key in self._holders:
            self._holders.move_to_end(key)

    def forget(self, holder: FileHolder) -> None:
        """``holder`` closed its descriptors itself."""
        if self._lock is not None:
            with self._lock:
                self._forget(holder)
            return
        self._forget(holder)

    def _forget(self, holder: FileHolder) -> None:
        entry = self._holders.pop(id(holder), None)
        if entry is not None:
            self._open -= entry[1]

    def _evict(self, keep: int) -> None:
        capacity = self._capacity or 0
        while self._open > capacity and len(self._holders) > 1:
            key, (holder, descriptors) = next(iter(self._holders.items()))
            if key == keep:
                self._holders.move_to_end(key)
                continue
            del self._holders[key]
            self._open -= descriptors
            self.evictions += 1
            holder.close_idle()

