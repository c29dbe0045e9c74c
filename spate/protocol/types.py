"""Kafka wire primitives as codecs: one encoder and one decoder per type.

Every codec is a pair of plain functions:

* ``encode(buf: bytearray, value) -> None`` appends the value's bytes;
* ``decode(mv: memoryview, pos: int) -> (value, new_pos)`` reads one value.

All integers are big-endian two's complement. Layouts:

===========================  ====================================================
type                         bytes
===========================  ====================================================
int8/16/32/64, uint16/32     1/2/4/8, 2/4
boolean                      1 (0 false, anything else true)
varint / varlong             zig-zag, 7 bits per byte, at most 5 / 10 bytes
unsigned varint              7 bits per byte, at most 5 bytes, < 2**32
uuid                         16
string                       int16 length (>= 0) + UTF-8
nullable string              int16 length (-1 = null) + UTF-8
bytes / nullable bytes       int32 length (-1 = null) + bytes
records                      nullable bytes, kept raw (never decoded here)
array / nullable array       int32 count (-1 = null) + elements
compact string/bytes/array   unsigned varint (length + 1, 0 = null) + payload
tagged fields                unsigned varint count + (uvarint tag, uvarint size,
                             payload) per field, tags strictly increasing
===========================  ====================================================

Decoders raise only :class:`ProtocolDecodeError`. Every length or count is
checked against the bytes that remain *before* anything is sliced or allocated,
so a hostile length cannot make the codec reserve memory or loop for long.
Encoders let Python's own exceptions (``struct.error``, ``TypeError``, ...)
escape for values that do not fit; callers wrap those (see ``ENCODE_FAILURES``).
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.records import varint
from spate.records.errors import CorruptRecordError

Encoder = Callable[[bytearray, Any], None]
Decoder = Callable[[memoryview, int], "tuple[Any, int]"]

# The exceptions an encoder may raise for a value that does not fit its type.
ENCODE_FAILURES = (struct.error, TypeError, ValueError, AttributeError, OverflowError, UnicodeError)


@dataclass(frozen=True, slots=True)
class Codec:
    """A wire type: its encoder, its decoder, and the fewest bytes a value takes.

    ``min_size`` bounds array counts before allocation. ``fmt`` is the struct
    format character of fixed-size integers, which lets arrays of them be read
    in one call.
    """

    name: str
    encode: Encoder
    decode: Decoder
    min_size: int
    fmt: str | None = None

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class FileRangeRef:
    """Records that stay where they are (usually a byte range of a log segment).

    The records encoder writes the length prefix and leaves a gap of ``size``
    bytes that whoever sends the frame fills, e.g. with ``sendfile``.
    ``payload`` is opaque to the codec.
    """

    size: int
    payload: Any = None


class PartsBuffer(bytearray):
    """An output buffer that lets large records stay out of line.

    Records given as :class:`FileRangeRef`, or as buffers of at least
    ``inline_limit`` bytes, are not copied in; the encoder notes where they
    belong, and :meth:`parts` returns the frame as a list of inline byte
    strings and those out-of-line payloads, in wire order.
    """

    __slots__ = ("deferred", "inline_limit")

    def __init__(self, inline_limit: int = 16384) -> None:
        super().__init__()
        self.deferred: list[tuple[int, Any]] = []
        self.inline_limit = inline_limit

    def defer(self, part: Any) -> None:
        self.deferred.append((len(self), part))

    @property
    def deferred_size(self) -> int:
        return sum(_payload_size(part) for _, part in self.deferred)

    def parts(self) -> list[bytes | memoryview | FileRangeRef]:
        out: list[bytes | memoryview | FileRangeRef] = []
        start = 0
        for position, part in self.deferred:
            if position > start:
                out.append(bytes(self[start:position]))
            out.append(part)
            start = position
        if start < len(self):
            out.append(bytes(self[start:]))
        return out


def _payload_size(part: Any) -> int:
    if isinstance(part, FileRangeRef):
        return part.size
    return memoryview(part).nbytes


def _truncated(what: str, pos: int) -> ProtocolDecodeError:
    return ProtocolDecodeError(f"truncated {what} at byte {pos}")


# --- fixed-size integers -----------------------------------------------------------------


def _fixed(name: str, fmt: str) -> Codec:
    packer = struct.Struct(">" + fmt)
    size = packer.size
    pack = packer.pack
    unpack_from = packer.unpack_from

    def encode(buf: bytearray, value: int) -> None:
        buf += pack(value)

    def decode(mv: memoryview, pos: int) -> tuple[int, int]:
        try:
            return unpack_from(mv, pos)[0], pos + size
        except struct.error:
            raise _truncated(name, pos) from None

    return Codec(name, encode, decode, size, fmt)


INT8 = _fixed("int8", "b")
INT16 = _fixed("int16", "h")
INT32 = _fixed("int32", "i")
INT64 = _fixed("int64", "q")
UINT16 = _fixed("uint16", "H")
UINT32 = _fixed("uint32", "I")
FLOAT64 = _fixed("float64", "d")

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_NULL16 = _I16.pack(-1)
_NULL32 = _I32.pack(-1)
_COMPACT_NULL = b"\x00"


def _encode_bool(buf: bytearray, value: bool) -> None:
    buf.append(1 if value else 0)


def _decode_bool(mv: memoryview, pos: int) -> tuple[bool, int]:
    if pos >= len(mv):
        raise _truncated("boolean", pos)
    return mv[pos] != 0, pos + 1


BOOLEAN = Codec("boolean", _encode_bool, _decode_bool, 1)


def _encode_uuid(buf: bytearray, value: uuid.UUID) -> None:
    buf += value.bytes


def _decode_uuid(mv: memoryview, pos: int) -> tuple[uuid.UUID, int]:
    end = pos + 16
    if end > len(mv):
        raise _truncated("uuid", pos)
    return uuid.UUID(bytes=bytes(mv[pos:end])), end


UUID = Codec("uuid", _encode_uuid, _decode_uuid, 16)
ZERO_UUID = uuid.UUID(int=0)


# --- variable-length integers --------------------------------------------------------------


# The varint code itself lives in spate.records.varint; these adapt it to the
# codec interface (append to a buffer; report bad input as a decode error).


def encode_unsigned_varint(buf: bytearray, value: int) -> None:
    buf += varint.encode_unsigned_varint(value)


def _decoded(decode: Callable[[memoryview, int], tuple[int, int]], mv: memoryview, pos: int) -> tuple[int, int]:
    try:
        return decode(mv, pos)
    except CorruptRecordError as exc:
        raise ProtocolDecodeError(f"{exc} (byte {pos})") from None


def decode_unsigned_varint(mv: memoryview, pos: int) -> tuple[int, int]:
    return _decoded(varint.decode_unsigned_varint, mv, pos)


def _encode_varint(buf: bytearray, value: int) -> None:
    buf += varint.encode_varint(value)


def _decode_varint(mv: memoryview, pos: int) -> tuple[int, int]:
    return _decoded(varint.decode_varint, mv, pos)


def _encode_varlong(buf: bytearray, value: int) -> None:
    buf += varint.encode_varlong(value)


def _decode_varlong(mv: memoryview, pos: int) -> tuple[int, int]:
    return _decoded(varint.decode_varlong, mv, pos)


VARINT = Codec("varint", _encode_varint, _decode_varint, 1)
VARLONG = Codec("varlong", _encode_varlong, _decode_varlong, 1)
UNSIGNED_VARINT = Codec("unsigned_varint", encode_unsigned_varint, decode_unsigned_varint, 1)


# --- length prefixes shared by strings, bytes, records and arrays -----------------------------


def _decode_length16(mv: memoryview, pos: int) -> tuple[int, int]:
    try:
        return _I16.unpack_from(mv, pos)[0], pos + 2
    except struct.error:
        raise _truncated("int16 length", pos) from None


def _decode_length32(mv: memoryview, pos: int) -> tuple[int, int]:
    try:
        return _I32.unpack_from(mv, pos)[0], pos + 4
    except struct.error:
        raise _truncated("int32 length", pos) from None


def _decode_compact_length(mv: memoryview, pos: int) -> tuple[int, int]:
    """Compact lengths are stored plus one so that 0 can mean null; -1 is null."""
    raw, pos = decode_unsigned_varint(mv, pos)
    return raw - 1, pos


def _check_payload(mv: memoryview, pos: int, length: int, what: str, nullable: bool) -> int:
    """End of a ``length``-byte payload at ``pos``; -1 when null is allowed and given."""
    if length < 0:
        if length == -1 and nullable:
            return -1
        raise ProtocolDecodeError(f"invalid {what} length {length} at byte {pos}")
    end = pos + length
    if end > len(mv):
        raise ProtocolDecodeError(f"{what} of {length} bytes overruns the buffer at byte {pos}")
    return end


# --- strings -------------------------------------------------------------------------------


def _string_codec(name: str, *, nullable: bool, compact: bool) -> Codec:
    read_length = _decode_compact_length if compact else _decode_length16

    def decode(mv: memoryview, pos: int) -> tuple[str | None, int]:
        length, pos = read_length(mv, pos)
        end = _check_payload(mv, pos, length, name, nullable)
        if end < 0:
            return None, pos
        try:
            return str(mv[pos:end], "utf-8"), end
        except UnicodeDecodeError:
            raise ProtocolDecodeError(f"{name} at byte {pos} is not UTF-8") from None

    if compact:

        def encode(buf: bytearray, value: str | None) -> None:
            if value is None and nullable:
                buf.append(0)
                return
            data = value.encode("utf-8")  # type: ignore[union-attr]
            encode_unsigned_varint(buf, len(data) + 1)
            buf += data

    else:

        def encode(buf: bytearray, value: str | None) -> None:
            if value is None and nullable:
                buf += _NULL16
                return
            data = value.encode("utf-8")  # type: ignore[union-attr]
            buf += _I16.pack(len(data))
            buf += data

    return Codec(name, encode, decode, 1 if compact else 2)


STRING = _string_codec("string", nullable=False, compact=False)
NULLABLE_STRING = _string_codec("nullable_string", nullable=True, compact=False)
COMPACT_STRING = _string_codec("compact_string", nullable=False, compact=True)
COMPACT_NULLABLE_STRING = _string_codec("compact_nullable_string", nullable=True, compact=True)


# --- bytes ---------------------------------------------------------------------------------


def _bytes_codec(name: str, *, nullable: bool, compact: bool) -> Codec:
    read_length = _decode_compact_length if compact else _decode_length32
    null = _COMPACT_NULL if compact else _NULL32

    def decode(mv: memoryview, pos: int) -> tuple[bytes | None, int]:
        length, pos = read_length(mv, pos)
        end = _check_payload(mv, pos, length, name, nullable)
        if end < 0:
            return None, pos
        return bytes(mv[pos:end]), end

    def encode(buf: bytearray, value: bytes | None) -> None:
        if value is None and nullable:
            buf += null
            return
        size = memoryview(value).nbytes  # type: ignore[arg-type]
        if compact:
            encode_unsigned_varint(buf, size + 1)
        else:
            buf += _I32.pack(size)
        buf += value  # type: ignore[operator]

    return Codec(name, encode, decode, 1 if compact else 4)


BYTES = _bytes_codec("bytes", nullable=False, compact=False)
NULLABLE_BYTES = _bytes_codec("nullable_bytes", nullable=True, compact=False)
COMPACT_BYTES = _bytes_codec("compact_bytes", nullable=False, compact=True)
COMPACT_NULLABLE_BYTES = _bytes_codec("compact_nullable_bytes", nullable=True, compact=True)


# --- records -------------------------------------------------------------------------------


def _records_codec(name: str, *, compact: bool) -> Codec:
    """Nullable bytes whose payload is never copied or parsed by the codec.

    Decoding returns a memoryview slice of the frame. Encoding accepts
    ``None``, any bytes-like object, or a :class:`FileRangeRef`; into a
    :class:`PartsBuffer`, file ranges and large buffers are deferred instead of
    copied.
    """
    read_length = _decode_compact_length if compact else _decode_length32
    null = _COMPACT_NULL if compact else _NULL32

    def decode(mv: memoryview, pos: int) -> tuple[memoryview | None, int]:
        length, pos = read_length(mv, pos)
        end = _check_payload(mv, pos, length, name, True)
        if end < 0:
            return None, pos
        return mv[pos:end], end

    def write_length(buf: bytearray, size: int) -> None:
        if compact:
            encode_unsigned_varint(buf, size + 1)
        else:
            buf += _I32.pack(size)

    def encode(buf: bytearray, value: Any) -> None:
        if value is None:
            buf += null
            return
        if isinstance(value, FileRangeRef):
            if not isinstance(buf, PartsBuffer):
                raise ProtocolUsageError("records given as a file range need encoding into parts")
            if value.size < 0:
                raise ValueError(f"negative file range size {value.size}")
            write_length(buf, value.size)
            buf.defer(value)
            return
        size = memoryview(value).nbytes
        write_length(buf, size)
        if isinstance(buf, PartsBuffer) and size >= buf.inline_limit:
            buf.defer(value)
        else:
            buf += value

    return Codec(name, encode, decode, 1 if compact else 4)


RECORDS = _records_codec("records", compact=False)
COMPACT_RECORDS = _records_codec("compact_records", compact=True)


# --- arrays --------------------------------------------------------------------------------


def array_codec(element: Codec, *, nullable: bool = False, compact: bool = False) -> Codec:
    """An array of ``element`` values, returned as a ``list`` (or ``None``)."""
    name = f"{'compact_' if compact else ''}{'nullable_' if nullable else ''}array[{element.name}]"
    read_count = _decode_compact_length if compact else _decode_length32
    null = _COMPACT_NULL if compact else _NULL32
    element_size = max(element.min_size, 1)
    decode_element = element.decode
    encode_element = element.encode
    fmt = element.fmt

    def decode(mv: memoryview, pos: int) -> tuple[list[Any] | None, int]:
        count, pos = read_count(mv, pos)
        if count < 0:
            if count == -1 and nullable:
                return None, pos
            raise ProtocolDecodeError(f"invalid {name} count {count} at byte {pos}")
        if count * element_size > len(mv) - pos:
            raise ProtocolDecodeError(f"{name} of {count} elements overruns the buffer at byte {pos}")
        if fmt is not None:
            # Fixed-size elements: one unpack instead of a loop.
            items = list(struct.unpack_from(f">{count}{fmt}", mv, pos))
            return items, pos + count * element_size
        items = []
        append = items.append
        for _ in range(count):
            item, pos = decode_element(mv, pos)
            append(item)
        return items, pos

    def encode(buf: bytearray, value: list[Any] | None) -> None:
        if value is None and nullable:
            buf += null
            return
        if compact:
            encode_unsigned_varint(buf, len(value) + 1)  # type: ignore[arg-type]
        else:
            buf += _I32.pack(len(value))  # type: ignore[arg-type]
        for item in value:  # type: ignore[union-attr]
            encode_element(buf, item)

    return Codec(name, encode, decode, 1 if compact else 4)


# --- tagged fields (flexible versions, KIP-482) ----------------------------------------------

EMPTY_TAGGED_FIELDS = b"\x00"


def decode_tagged_fields(mv: memoryview, pos: int) -> tuple[list[tuple[int, int, int]], int]:
    """Read a tagged-field section: ``[(tag, start, end)]`` of each payload."""
    count, pos = decode_unsigned_varint(mv, pos)
    if count * 2 > len(mv) - pos:  # each field takes at least a tag byte and a size byte
        raise ProtocolDecodeError(f"{count} tagged fields overrun the buffer at byte {pos}")
    fields = []
    previous = -1
    for _ in range(count):
        tag, pos = decode_unsigned_varint(mv, pos)
        if tag <= previous:
            raise ProtocolDecodeError(f"tagged field {tag} out of order at byte {pos}")
        previous = tag
        size, pos = decode_unsigned_varint(mv, pos)
        end = _check_payload(mv, pos, size, "tagged field", False)
        fields.append((tag, pos, end))
        pos = end
    return fields, pos


def skip_tagged_fields(mv: memoryview, pos: int) -> int:
    """Position just past a tagged-field section whose contents are not needed."""
    return decode_tagged_fields(mv, pos)[1]


def encode_tagged_fields(buf: bytearray, fields: Iterable[tuple[int, bytes]]) -> None:
    """Write ``(tag, payload)`` pairs, which must come in increasing tag order."""
    fields = list(fields)
    encode_unsigned_varint(buf, len(fields))
    for tag, payload in fields:
        encode_unsigned_varint(buf, tag)
        encode_unsigned_varint(buf, len(payload))
        buf += payload
