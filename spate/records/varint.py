"""Varints: the only variable-length integer code of Spate, for records and for the protocol.

Records use zig-zag varints and varlongs; flexible protocol versions use
unsigned varints for compact lengths and tagged fields (``spate.protocol.types``
wraps these functions and reports their errors as protocol decode errors).

A signed value ``n`` is first zig-zag mapped to an unsigned one
(0→0, -1→1, 1→2, -2→3, …) so that small magnitudes of either sign stay short,
then written little-end first in groups of 7 bits, the high bit of each byte
saying "more follows".

Bounds are strict on read: a 32-bit varint takes at most 5 bytes and its fifth
byte may carry only the 4 bits that remain; a 64-bit varlong takes at most 10
bytes with a single bit in the tenth. Anything longer is ``varint overflow``;
running out of bytes mid-value is ``truncated varint``. Both raise
``CorruptRecordError``. Encoding a value outside the type's range is a caller
bug and raises ``ValueError``.
"""

from __future__ import annotations

from typing import Callable

from spate.records.errors import CorruptRecordError

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1

MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10

# Every zig-zag value below 128 encodes to one byte; building them once keeps
# the common case (small deltas, short lengths, null markers) allocation-free.
_ONE_BYTE: tuple[bytes, ...] = tuple(bytes((i,)) for i in range(0x80))


def _encode_unsigned(z: int) -> bytes:
    if z < 0x80:
        return _ONE_BYTE[z]
    if z < 0x4000:
        return bytes(((z & 0x7F) | 0x80, z >> 7))
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def encode_unsigned_varint(value: int) -> bytes:
    """Unsigned varint of ``0 <= value < 2**32`` (1 to 5 bytes), as flexible protocol versions use."""
    if value < 0 or value > UINT32_MAX:
        raise ValueError(f"unsigned varint value {value} is outside 0..2**32-1")
    return _encode_unsigned(value)


def encode_varint(value: int) -> bytes:
    """Zig-zag varint of a signed 32-bit ``value`` (1 to 5 bytes)."""
    if -64 <= value < 64:
        return _ONE_BYTE[(value << 1) ^ (value >> 31)]
    if value < INT32_MIN or value > INT32_MAX:
        raise ValueError(f"varint value {value} is outside the int32 range")
    return _encode_unsigned((value << 1) ^ (value >> 31))


def encode_varlong(value: int) -> bytes:
    """Zig-zag varlong of a signed 64-bit ``value`` (1 to 10 bytes)."""
    if value < INT64_MIN or value > INT64_MAX:
        raise ValueError(f"varlong value {value} is outside the int64 range")
    return _encode_unsigned((value << 1) ^ (value >> 63))


def size_of_varint(value: int) -> int:
    """Bytes ``encode_varint(value)`` would take."""
    return len(encode_varint(value))


def size_of_varlong(value: int) -> int:
    """Bytes ``encode_varlong(value)`` would take."""
    return len(encode_varlong(value))


def _decode_unsigned(
    buf: bytes | bytearray | memoryview, position: int, end: int, max_bytes: int, last_byte_max: int
) -> tuple[int, int]:
    last_index = position + max_bytes - 1
    unsigned = 0
    shift = 0
    pos = position
    while True:
        if pos >= end:
            raise CorruptRecordError(f"truncated varint at position {position}")
        byte = buf[pos]
        if pos == last_index and byte > last_byte_max:
            raise CorruptRecordError(f"varint overflow at position {position}")
        unsigned |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return unsigned, pos
        shift += 7


def _zigzag_decoder(max_bytes: int, last_byte_max: int) -> Callable[..., tuple[int, int]]:
    """A zig-zag decoder for values of at most ``max_bytes`` bytes (one body for varints and varlongs).

    Built as a closure rather than a shared helper: a call per varint more
    would cost a quarter of a record's decoding time.
    """

    def decode(buf: bytes | bytearray | memoryview, position: int = 0, end: int | None = None) -> tuple[int, int]:
        if end is None:
            end = len(buf)
        # Nearly every varint in a record (deltas, lengths, counts) takes one or two
        # bytes: those are decoded inline, on the hot path of every record read. An
        # ``end`` past the buffer falls through to the checked loop below.
        try:
            if position < end:
                byte = buf[position]
                if byte < 0x80:
                    return (byte >> 1) ^ -(byte & 1), position + 1
                if position + 1 < end:
                    second = buf[position + 1]
                    if second < 0x80:
                        unsigned = (byte & 0x7F) | (second << 7)
                        return (unsigned >> 1) ^ -(unsigned & 1), position + 2
        except IndexError:
            pass
        unsigned, position = _decode_unsigned(buf, position, min(end, len(buf)), max_bytes, last_byte_max)
        return (unsigned >> 1) ^ -(unsigned & 1), position

    return decode


decode_varint = _zigzag_decoder(MAX_VARINT_BYTES, 0x0F)
decode_varint.__name__ = decode_varint.__qualname__ = "decode_varint"
decode_varint.__doc__ = """Read a 32-bit zig-zag varint at ``position``; return ``(value, next_position)``.

``end`` bounds the read (default: the end of ``buf``).
"""

decode_varlong = _zigzag_decoder(MAX_VARLONG_BYTES, 0x01)
decode_varlong.__name__ = decode_varlong.__qualname__ = "decode_varlong"
decode_varlong.__doc__ = """Read a 64-bit zig-zag varlong at ``position``; return ``(value, next_position)``."""


def decode_unsigned_varint(
    buf: bytes | bytearray | memoryview, position: int = 0, end: int | None = None
) -> tuple[int, int]:
    """Read an unsigned varint below 2**32 at ``position``; return ``(value, next_position)``."""
    limit = len(buf) if end is None else min(end, len(buf))
    return _decode_unsigned(buf, position, limit, MAX_VARINT_BYTES, 0x0F)
