"""Size-prefixed frames: every Kafka request and response is ``int32 size`` + payload.

Reading: :class:`FrameReader` buffers whatever bytes arrive and hands out
complete payloads. A size prefix that is negative or above the limit (the
broker's ``socket.request.max.bytes``) is refused the moment its four bytes
arrive, before anything is reserved for it; after that the stream cannot be
resynchronised, so the reader stays broken and the connection must close.

Writing: :func:`encode_frame` returns one ``bytes``; :func:`encode_frame_parts`
returns the frame as a list of parts in wire order, where records that are
file ranges (or large buffers) appear as themselves instead of being copied.
The size prefix in the first part already counts every part, so a sender
writes the inline parts and ``sendfile``\\ s the file ranges in order.
"""

from __future__ import annotations

import struct
from typing import Callable, Sequence

from spate.protocol.errors import FrameTooLargeError, ProtocolUsageError
from spate.protocol.types import FileRangeRef, PartsBuffer

SIZE_PREFIX = 4
MAX_FRAME_SIZE = 0x7FFFFFFF
# Kafka's default socket.request.max.bytes.
DEFAULT_MAX_REQUEST_SIZE = 104857600
# Records at least this large are sent out of line rather than copied into the frame.
DEFAULT_INLINE_LIMIT = 16384

_SIZE = struct.Struct(">i")
# Compact the receive buffer once this many consumed bytes sit at its front.
_COMPACT_AFTER = 1 << 16

FramePart = bytes | memoryview | FileRangeRef


class FrameReader:
    """Splits a byte stream into frame payloads (the bytes after each size prefix)."""

    def __init__(self, max_frame_size: int = DEFAULT_MAX_REQUEST_SIZE) -> None:
        if not 0 <= max_frame_size <= MAX_FRAME_SIZE:
            raise ProtocolUsageError(f"max_frame_size {max_frame_size} outside 0..{MAX_FRAME_SIZE}")
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._start = 0
        self._refused: tuple[int, int] | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buf) - self._start

    @property
    def pending_frame_size(self) -> int | None:
        """The payload size announced by the incomplete frame at the head of the buffer, once its size prefix
        has arrived; None before that (a size outside the limit is refused by :meth:`next_frame`)."""
        if self._refused is not None or len(self._buf) - self._start < SIZE_PREFIX:
            return None
        return _SIZE.unpack_from(self._buf, self._start)[0]

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        if self._refused is None:  # a refused stream is dead; do not let it grow
            self._buf += data

    def next_frame(self) -> bytes | None:
        """The next complete payload, or None until more bytes arrive."""
        if self._refused is not None:
            raise FrameTooLargeError(*self._refused)
        start = self._start
        available = len(self._buf) - start
        if available < SIZE_PREFIX:
            return None
        size = _SIZE.unpack_from(self._buf, start)[0]
        if size < 0 or size > self.max_frame_size:
            self._refused = (size, self.max_frame_size)
            raise FrameTooLargeError(size, self.max_frame_size)
        if available < SIZE_PREFIX + size:
            return None
        begin = start + SIZE_PREFIX
        with memoryview(self._buf) as view:
            payload = bytes(view[begin : begin + size])
        self._consume(begin + size)
        return payload

    def _consume(self, end: int) -> None:
        if end == len(self._buf):
            self._buf.clear()
            self._start = 0
        elif end >= _COMPACT_AFTER and end * 2 >= len(self._buf):
            del self._buf[:end]
            self._start = 0
        else:
            self._start = end


def payload_size(prefix: bytes, max_frame_size: int = MAX_FRAME_SIZE) -> int:
    """The payload size a frame's 4-byte ``prefix`` announces, for callers reading whole frames off a stream;
    FrameTooLargeError outside ``0..max_frame_size``."""
    size = _SIZE.unpack(prefix)[0]
    if size < 0 or size > max_frame_size:
        raise FrameTooLargeError(size, max_frame_size)
    return size


def encode_frame(write: Callable[[bytearray], None]) -> bytes:
    """A size-prefixed frame whose payload ``write`` appends to the buffer it is given."""
    buf = bytearray(SIZE_PREFIX)
    write(buf)
    _SIZE.pack_into(buf, 0, _checked_size(len(buf) - SIZE_PREFIX))
    return bytes(buf)


def encode_frame_parts(
    write: Callable[[bytearray], None], inline_limit: int = DEFAULT_INLINE_LIMIT
) -> list[FramePart]:
    """Like :func:`encode_frame`, but records stay out of line as separate parts."""
    buf = PartsBuffer(inline_limit)
    buf += bytes(SIZE_PREFIX)
    write(buf)
    _SIZE.pack_into(buf, 0, _checked_size(len(buf) - SIZE_PREFIX + buf.deferred_size))
    return buf.parts()


def frame_length(parts: Sequence[FramePart]) -> int:
    """Total bytes the parts put on the wire, size prefix included."""
    total = 0
    for part in parts:
        total += part.size if isinstance(part, FileRangeRef) else memoryview(part).nbytes
    return total


def _checked_size(size: int) -> int:
    if size > MAX_FRAME_SIZE:
        raise ProtocolUsageError(f"frame of {size} bytes exceeds the int32 size prefix")
    return size
