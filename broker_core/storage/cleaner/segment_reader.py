"""Reading a rolled segment's batches from a cleaner thread.

The cleaner reads through a descriptor of its own (the log's open-file cache
belongs to the request thread), opened on the ``.log`` path it was given.
Rolled segments are never appended to; a segment that is removed meanwhile
stays readable through the open descriptor, and one that cannot be opened
any more makes the cleaning of that log stale (``FileNotFoundError``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

from spate.records.batch import LOG_OVERHEAD, BatchHeader, parse_header, peek_offset_and_length
from spate.records.errors import CorruptRecordError

READ_CHUNK = 4 * 1024 * 1024


def read_batches(
    path: Path, size: int, *, on_read: Callable[[int], None] | None = None
) -> Iterator[tuple[BatchHeader, bytes]]:
    """``(header, batch bytes)`` of each batch in the first ``size`` bytes of ``path``.

    The header's position is 0 (relative to the batch bytes). ``on_read`` hears
    of every batch's size before it is handed out (the throttlers).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        position = 0  # of the file, up to where it was read
        buffered = b""
        at = 0  # of ``buffered``: where the next batch starts
        while True:
            available = len(buffered) - at
            if available >= LOG_OVERHEAD and available >= _batch_size(buffered, at):
                batch_size = _batch_size(buffered, at)
                batch = buffered[at : at + batch_size]
                at += batch_size
                if on_read is not None:
                    on_read(batch_size)
                yield parse_header(batch, 0), batch
                continue
            if position >= size:
                if available:
                    raise CorruptRecordError(f"{path} ends inside a batch at {size}")
                return
            chunk = os.pread(fd, min(READ_CHUNK, size - position), position)
            if not chunk:
                raise CorruptRecordError(f"{path} is shorter than {size} bytes")
            position += len(chunk)
            buffered = buffered[at:] + chunk
            at = 0
    finally:
        os.close(fd)


def _batch_size(buf: bytes, at: int) -> int:
    _, length = peek_offset_and_length(buf, at)
    if length <= 0:
        raise CorruptRecordError(f"a batch declares length {length}")
    return length + LOG_OVERHEAD
