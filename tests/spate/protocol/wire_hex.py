"""Hex spellings of Kafka's wire primitives, for byte tables written by hand.

Classic encodings (non-flexible versions) and their compact counterparts
(flexible versions: unsigned-varint lengths stored as length + 1, 0 = null).
"""

from __future__ import annotations

import struct
import uuid

TAGS = "00"  # an empty tagged-field section


def i8(v: int) -> str:
    return struct.pack(">b", v).hex()


def i16(v: int) -> str:
    return struct.pack(">h", v).hex()


def i32(v: int) -> str:
    return struct.pack(">i", v).hex()


def i64(v: int) -> str:
    return struct.pack(">q", v).hex()


def boolean(v: bool) -> str:
    return "01" if v else "00"


def uid(v: uuid.UUID) -> str:
    return v.bytes.hex()


def uvarint(v: int) -> str:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return out.hex()


def s(text: str | None) -> str:
    """STRING / NULLABLE_STRING: int16 length, -1 for null."""
    if text is None:
        return i16(-1)
    return i16(len(text.encode())) + text.encode().hex()


def cs(text: str | None) -> str:
    """COMPACT_STRING / COMPACT_NULLABLE_STRING: uvarint length + 1, 0 for null."""
    if text is None:
        return "00"
    return uvarint(len(text.encode()) + 1) + text.encode().hex()


def arr(count: int | None) -> str:
    """ARRAY length: int32, -1 for null."""
    return i32(-1 if count is None else count)


def carr(count: int | None) -> str:
    """COMPACT_ARRAY length: uvarint count + 1, 0 for null."""
    return "00" if count is None else uvarint(count + 1)


def i32s(values: list[int]) -> str:
    return arr(len(values)) + "".join(i32(v) for v in values)


def ci32s(values: list[int]) -> str:
    return carr(len(values)) + "".join(i32(v) for v in values)
