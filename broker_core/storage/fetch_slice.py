"""The answer to a log read: a byte range of one segment file.

The range holds whole batches only, so it can go to a socket as it is
(``socket.sendfile(slice.file, slice.position, slice.size)`` or
``loop.sendfile``) without being copied into Python.

Lifetime: the file object belongs to the segment. It stays open while the
segment is live and, after retention or truncation removes the segment, until
the delayed deletion runs ``file.delete.delay.ms`` later; send the slice well
before that. A slice of bytes later truncated away (a follower's log
truncation) is stale and must not be sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from broker_core.storage.batch_reader import pread_fully


@dataclass(frozen=True, slots=True)
class FetchSlice:
    """``size`` bytes at ``position`` of ``file``: whole batches from ``first_offset``.

    ``first_offset`` is the base offset of the first batch (it may be below
    the requested offset when that offset is inside the batch);
    ``last_offset`` is the last offset of the last batch. For an empty slice
    ``first_offset`` is the requested offset and ``last_offset`` one less.
    """

    file: BinaryIO
    position: int
    size: int
    first_offset: int
    last_offset: int
    segment_base_offset: int

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    @property
    def next_offset(self) -> int:
        """Where a consumer continues after this slice."""
        return self.last_offset + 1

    def fileno(self) -> int:
        return self.file.fileno()

    def read_bytes(self) -> bytes:
        """Copy the slice into memory (for transports without sendfile)."""
        if self.size == 0:
            return b""
        data = pread_fully(self.file.fileno(), self.size, self.position)
        if len(data) != self.size:
            raise OSError(f"segment file ended after {len(data)} of {self.size} bytes; the slice is stale")
        return data
