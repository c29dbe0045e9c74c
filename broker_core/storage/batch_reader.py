"""Reading batch headers and batches out of a segment file with few syscalls.

Storage walks batch headers to find offsets and batch boundaries; reading each
12-byte prefix with its own ``pread`` would cost a syscall per batch, so the
reader keeps one window of the file and serves every header it covers.
"""

from __future__ import annotations

import os

from spate.records.batch import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, parse_header, peek_offset_and_length
from spate.records.errors import CorruptRecordError

INITIAL_WINDOW = 512
MAX_WINDOW = 64 * 1024


class BatchReader:
    """Random access to the bytes ``[0, end)`` of an open file descriptor.

    The window starts small (a single lookup reads little) and doubles on
    every refill up to ``max_window``, so a long walk over small batches
    needs few syscalls.
    """

    def __init__(
        self, fd: int, end: int, *, window: int = INITIAL_WINDOW, max_window: int = MAX_WINDOW, owner: object = None
    ) -> None:
        """``owner``, when given, is the file object of ``fd``: held so the descriptor stays open."""
        self._fd = fd
        self._owner = owner
        self._end = end
        self._window = window
        self._max_window = max(window, max_window)
        self._buf = b""
        self._start = 0

    @property
    def end(self) -> int:
        return self._end

    def view(self, position: int, size: int) -> memoryview:
        """``size`` bytes at ``position``; fewer only at the end of the range."""
        size = max(0, min(size, self._end - position))
        offset = position - self._start
        if offset < 0 or offset + size > len(self._buf):
            self._buf = pread_fully(self._fd, min(max(size, self._window), self._end - position), position)
            self._start = position
            self._window = min(self._window * 2, self._max_window)
            offset = 0
        return memoryview(self._buf)[offset : offset + size]

    def header_at(self, position: int) -> BatchHeader:
        """The header of the batch at ``position`` (framing not validated)."""
        header = parse_header(self.view(position, HEADER_SIZE), 0)
        return _at(header, position)

    def offset_and_length_at(self, position: int) -> tuple[int, int]:
        return peek_offset_and_length(self.view(position, LOG_OVERHEAD), 0)

    def next_header(self, position: int) -> BatchHeader:
        """The header at ``position``, checking that the whole batch lies within the range."""
        header = self.header_at(position)
        if header.batch_length < HEADER_SIZE - LOG_OVERHEAD:
            raise CorruptRecordError(f"batch at position {position} declares length {header.batch_length}")
        if position + header.size > self._end:
            raise CorruptRecordError(
                f"batch at position {position} declares {header.size} bytes, {self._end - position} remain"
            )
        return header


def _at(header: BatchHeader, position: int) -> BatchHeader:
    if header.position == position:
        return header
    return BatchHeader(
        header.base_offset,
        header.batch_length,
        header.partition_leader_epoch,
        header.magic,
        header.crc,
        header.attributes,
        header.last_offset_delta,
        header.base_timestamp,
        header.max_timestamp,
        header.producer_id,
        header.producer_epoch,
        header.base_sequence,
        header.records_count,
        position,
    )


def pread_fully(fd: int, size: int, position: int) -> bytes:
    """``size`` bytes at ``position``, or fewer if the file ends first."""
    data = os.pread(fd, size, position)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, position + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)
