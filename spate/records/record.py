"""One record inside a RecordBatch v2, and its byte encoding.

Byte layout of a record (all varints zig-zag, see ``varint.py``)::

    length          varint   bytes of everything below
    attributes      int8     unused since v2; written as 0, ignored on read
    timestampDelta  varlong  from the batch's baseTimestamp
    offsetDelta     varint   from the batch's baseOffset
    keyLength       varint   -1 = null key
    key             bytes
    valueLength     varint   -1 = null value
    value           bytes
    headersCount    varint
    headers         headersCount × [keyLength varint, key UTF-8 (never null),
                                    valueLength varint (-1 = null), value]

A length of -1 means null where the field may be null; any other negative
length, a header key that is null or not UTF-8, a field that runs past the
record's declared length, or a record whose fields do not fill exactly its
declared length raises ``CorruptRecordError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from spate.records.errors import CorruptRecordError
from spate.records.varint import decode_varint, decode_varlong, encode_varint, encode_varlong

Header = tuple[str, bytes | None]

# attributes + timestampDelta + offsetDelta + keyLength + valueLength +
# headersCount, each at least one byte.
MIN_RECORD_BODY_SIZE = 6

_NULL_LENGTH = encode_varint(-1)
_ZERO = encode_varint(0)
_ATTRIBUTES = b"\x00"


class TimestampType(IntEnum):
    """Bit 3 of the batch attributes: who chose the records' timestamps."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


# Not frozen: readers build one per record, and a frozen dataclass costs
# several times as much to construct. Treat records as values all the same.
@dataclass(slots=True)
class Record:
    """A record with absolute offset and timestamp: what the builder takes and the reader returns."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def encode_record_into(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...] | list[Header] = (),
) -> None:
    """Append one length-prefixed record to ``out``."""
    body = bytearray(_ATTRIBUTES)
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    if key is None:
        body += _NULL_LENGTH
    else:
        body += encode_varint(len(key))
        body += key
    if value is None:
        body += _NULL_LENGTH
    else:
        body += encode_varint(len(value))
        body += value
    if headers:
        body += encode_varint(len(headers))
        for header_key, header_value in headers:
            if header_key is None:
                raise ValueError("a record header key cannot be null")
            encoded_key = header_key.encode("utf-8")
            body += encode_varint(len(encoded_key))
            body += encoded_key
            if header_value is None:
                body += _NULL_LENGTH
            else:
                body += encode_varint(len(header_value))
                body += header_value
    else:
        body += _ZERO
    out += encode_varint(len(body))
    out += body


def decode_record(
    data: bytes, position: int, end: int | None = None
) -> tuple[int, int, bytes | None, bytes | None, tuple[Header, ...], int]:
    """Decode the record at ``position`` of ``data`` (bytes, so fields come out as bytes).

    Returns ``(offset_delta, timestamp_delta, key, value, headers, next_position)``.
    ``end`` bounds the record (default: the end of ``data``).
    """
    limit = len(data) if end is None else end
    length, pos = decode_varint(data, position, limit)
    if length < MIN_RECORD_BODY_SIZE:
        raise CorruptRecordError(f"record at position {position} declares length {length}")
    record_end = pos + length
    if record_end > limit:
        raise CorruptRecordError(
            f"record at position {position} declares length {length}, "
            f"past the end of the records section by {record_end - limit} bytes"
        )
    pos += 1  # attributes: no bits are defined for records
    timestamp_delta, pos = decode_varlong(data, pos, record_end)
    offset_delta, pos = decode_varint(data, pos, record_end)

    size, pos = decode_varint(data, pos, record_end)
    if size >= 0:
        if pos + size > record_end:
            raise CorruptRecordError(f"record at position {position}: key runs past the record")
        key: bytes | None = data[pos : pos + size]
        pos += size
    elif size == -1:
        key = None
    else:
        raise CorruptRecordError(f"record at position {position}: negative key length {size}")

    size, pos = decode_varint(data, pos, record_end)
    if size >= 0:
        if pos + size > record_end:
            raise CorruptRecordError(f"record at position {position}: value runs past the record")
        value: bytes | None = data[pos : pos + size]
        pos += size
    elif size == -1:
        value = None
    else:
        raise CorruptRecordError(f"record at position {position}: negative value length {size}")

    count, pos = decode_varint(data, pos, record_end)
    if count == 0:
        headers: tuple[Header, ...] = ()
    else:
        # Each header takes at least two bytes, so a larger count cannot fit.
        if count < 0 or count > (record_end - pos) // 2:
            raise CorruptRecordError(f"record at position {position}: impossible header count {count}")
        headers, pos = _decode_headers(data, pos, record_end, count, position)

    if pos != record_end:
        raise CorruptRecordError(
            f"record at position {position} declares length {length} "
            f"but its fields take {pos - (record_end - length)} bytes"
        )
    return offset_delta, timestamp_delta, key, value, headers, record_end


def _decode_headers(
    data: bytes, pos: int, record_end: int, count: int, position: int
) -> tuple[tuple[Header, ...], int]:
    headers: list[Header] = []
    for _ in range(count):
        size, pos = decode_varint(data, pos, record_end)
        if size < 0:
            raise CorruptRecordError(f"record at position {position}: header key length {size}")
        if pos + size > record_end:
            raise CorruptRecordError(f"record at position {position}: header key runs past the record")
        try:
            header_key = data[pos : pos + size].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptRecordError(f"record at position {position}: header key is not UTF-8") from exc
        pos += size
        size, pos = decode_varint(data, pos, record_end)
        if size >= 0:
            if pos + size > record_end:
                raise CorruptRecordError(f"record at position {position}: header value runs past the record")
            header_value: bytes | None = data[pos : pos + size]
            pos += size
        elif size == -1:
            header_value = None
        else:
            raise CorruptRecordError(f"record at position {position}: negative header value length {size}")
        headers.append((header_key, header_value))
    return tuple(headers), pos
