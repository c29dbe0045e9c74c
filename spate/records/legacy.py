"""Kafka's legacy message sets (magic 0 and 1): read them, and convert to and from RecordBatch v2.

Spate stores only RecordBatch v2. Produce v0-2 brings message sets of magic 0
or 1, which ``upconvert`` turns into one v2 batch; Fetch v0-3 wants message
sets back, which ``downconvert`` writes from v2 batches, as Kafka's
``RecordsUtil.downConvert`` does.

Byte layout of one entry of a message set (big-endian)::

    offset      int64
    size        int32   bytes of the message below
    crc         uint32  CRC-32 (zlib's) of magic..end
    magic       int8    0 or 1
    attributes  int8    bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4);
                        bit 3 LogAppendTime (magic 1 only)
    timestamp   int64   magic 1 only
    key         int32 length (-1 = null), bytes
    value       int32 length (-1 = null), bytes

A compressed message (a wrapper) has a null key and, as value, an inner
message set compressed with its codec (see ``legacy_compression.py``). Inner
messages have the wrapper's magic and no codec: Kafka refuses nested
wrappers. Under magic 0 inner offsets are absolute. Under magic 1 they are
relative to the first inner message, and the wrapper's offset is the absolute
offset of the last one; a wrapper offset of 0 means inner offsets are already
absolute (as some librdkafka versions write them). A magic 1 wrapper with the
LogAppendTime bit gives its timestamp to every inner message.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from spate.records.batch import COMPRESSION_MASK, TIMESTAMP_TYPE_MASK, validate_batch  # same bits as v2's
from spate.records.builder import build_batch
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression
from spate.records.errors import CorruptRecordError
from spate.records.legacy_compression import compress_legacy, decompress_legacy, legacy_codec
from spate.records.reader import RecordColumns, decode_batch_columns
from spate.records.record import Record, TimestampType

Buffer = bytes | bytearray | memoryview

MAGIC_V0 = 0
MAGIC_V1 = 1
NO_TIMESTAMP = -1

ENTRY_OVERHEAD = 12  # offset + size
MAGIC_POSITION = 16  # offset + size + crc; the same byte as a v2 batch's magic
RECORD_OVERHEAD_V0 = 14  # crc + magic + attributes + key length + value length
RECORD_OVERHEAD_V1 = 22  # ... + timestamp

_ENTRY = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
_ENTRY_HEAD = struct.Struct(">qiI")
_BODY_V0 = struct.Struct(">bb")
_BODY_V1 = struct.Struct(">bbq")
_NULL = _LENGTH.pack(-1)


@dataclass(slots=True)
class LegacyMessage:
    """One message of a legacy set, wrappers flattened: absolute offset, effective timestamp.

    ``compression`` is the codec of the wrapper that carried the message
    (NONE for a message that stood on its own).
    """

    offset: int
    timestamp: int  # NO_TIMESTAMP (-1) for magic 0
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    magic: int
    compression: Compression = Compression.NONE


class UnsupportedDownConversion(Exception):
    """A batch that no legacy format can express (ZSTD); Kafka answers UNSUPPORTED_COMPRESSION_TYPE."""


def entry_magic(records: Buffer, position: int = 0) -> int:
    """The magic byte of the entry at ``position``: byte 16 of a legacy entry and of a v2 batch alike."""
    if len(records) - position <= MAGIC_POSITION:
        raise CorruptRecordError(
            f"entry at position {position} is truncated before its magic byte: {max(len(records) - position, 0)} bytes"
        )
    return struct.unpack_from(">b", records, position + MAGIC_POSITION)[0]


@dataclass(frozen=True, slots=True)
class _Entry:
    """One validated message of a set, before any wrapper is opened."""

    offset: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    position: int
    end: int

    @property
    def codec_id(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == MAGIC_V0 or not self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.CREATE_TIME
        return TimestampType.LOG_APPEND_TIME


def read_message_set(
    records: Buffer, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> list[LegacyMessage]:
    """Validate a whole message set and return its messages, wrappers flattened, in order.

    Every message is checked (framing, size, CRC, magic 0/1, codec); a
    partial entry at the end is corrupt, as a produce request carries whole
    messages. Wrappers must hold at least one message, of their own magic and
    uncompressed. All wrappers together may decompress to at most
    ``max_decompressed_size`` bytes. Problems raise ``CorruptRecordError``
    naming the position (in ``records``) of the offending entry.
    """
    data = bytes(records)
    messages: list[LegacyMessage] = []
    budget = max_decompressed_size
    position = 0
    while position < len(data):
        entry = _read_entry(data, position, f"message at position {position}")
        position = entry.end
        if entry.codec_id == 0:
            messages.append(
                LegacyMessage(entry.offset, entry.timestamp, entry.timestamp_type, entry.key, entry.value, entry.magic)
            )
            continue
        codec = legacy_codec(entry.codec_id, entry.magic)
        if entry.value is None:
            raise CorruptRecordError(f"compressed message at position {entry.position} has a null value")
        inner = decompress_legacy(codec, entry.value, budget)
        budget -= len(inner)
        messages.extend(_unwrap(entry, codec, inner))
    return messages


def _read_entry(data: bytes, position: int, label: str) -> _Entry:
    """Parse and check the entry at ``position``; ``label`` names it (and where it is) in errors."""
    available = len(data) - position
    if available < ENTRY_OVERHEAD + RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"{label} is truncated: {available} bytes")
    offset, size, crc, magic, attributes = _ENTRY.unpack_from(data, position)
    if size < RECORD_OVERHEAD_V0:
        raise CorruptRecordError(f"{label} declares size {size}, under {RECORD_OVERHEAD_V0}")
    end = position + ENTRY_OVERHEAD + size
    if end > len(data):
        raise CorruptRecordError(f"{label} is truncated: declares {size} bytes, {available - ENTRY_OVERHEAD} follow")
    if magic not in (MAGIC_V0, MAGIC_V1):
        raise CorruptRecordError(f"{label} has magic {magic}, expected 0 or 1")
    if magic == MAGIC_V1 and size < RECORD_OVERHEAD_V1:
        raise CorruptRecordError(f"{label} declares size {size}, under {RECORD_OVERHEAD_V1} for magic 1")
    actual = zlib.crc32(memoryview(data)[position + MAGIC_POSITION : end])
    if actual != crc:
        raise CorruptRecordError(f"{label} fails its CRC: stored {crc:#010x}, computed {actual:#010x}")
    pos = position + MAGIC_POSITION + 2
    timestamp = NO_TIMESTAMP
    if magic == MAGIC_V1:
        (timestamp,) = _TIMESTAMP.unpack_from(data, pos)
        pos += 8
    key, pos = _read_bytes(data, pos, end, label, "key")
    value, pos = _read_bytes(data, pos, end, label, "value")
    if pos != end:
        raise CorruptRecordError(f"{label} has {end - pos} bytes after its value")
    return _Entry(offset, magic, attributes, timestamp, key, value, position, end)


def _read_bytes(data: bytes, pos: int, end: int, label: str, field: str) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError(f"{label}: {field} length runs past the message")
    (length,) = _LENGTH.unpack_from(data, pos)
    pos += 4
    if length == -1:
        return None, pos
    if length < 0 or pos + length > end:
        raise CorruptRecordError(f"{label}: {field} of length {length} does not fit the message")
    return data[pos : pos + length], pos + length


def _unwrap(wrapper: _Entry, codec: Compression, inner: bytes) -> list[LegacyMessage]:
    """The inner messages of ``wrapper`` with absolute offsets and effective timestamps."""
    where = f"compressed message at position {wrapper.position}"
    entries: list[_Entry] = []
    position = 0
    while position < len(inner):
        entry = _read_entry(inner, position, f"inner message at position {position} of the {where}")
        if entry.magic != wrapper.magic:
            raise CorruptRecordError(f"{where} holds a magic {entry.magic} message in a magic {wrapper.magic} wrapper")
        if entry.codec_id != 0:
            raise CorruptRecordError(f"{where} holds a compressed message: wrappers do not nest")
        entries.append(entry)
        position = entry.end
    if not entries:
        raise CorruptRecordError(f"{where} holds no messages")
    base = 0
    if wrapper.magic == MAGIC_V1 and wrapper.offset != 0:
        last_inner = entries[-1].offset
        if wrapper.offset < last_inner:
            raise CorruptRecordError(
                f"{where} has offset {wrapper.offset}, below its last inner offset {last_inner}, and not 0"
            )
        base = wrapper.offset - last_inner
    timestamp_type = wrapper.timestamp_type
    append_time = wrapper.timestamp if timestamp_type is TimestampType.LOG_APPEND_TIME else None
    return [
        LegacyMessage(
            base + entry.offset,
            entry.timestamp if append_time is None else append_time,
            timestamp_type,
            entry.key,
            entry.value,
            entry.magic,
            codec,
        )
        for entry in entries
    ]


def upconvert(records: Buffer, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> bytes:
    """A legacy message set as ONE RecordBatch v2 for the broker to append (b"" for an empty set).

    The batch holds every message in order at offsets 0..n-1 (the broker
    assigns the real ones), without producer id or headers, as CreateTime
    with each message's own timestamp (-1 under magic 0), compressed with the
    codec of the first wrapper (none when no message was compressed). A
    message marked LogAppendTime makes it a LogAppendTime batch, which a
    broker refuses from a producer.
    Corrupt input raises ``CorruptRecordError`` as ``read_message_set`` does.
    """
    messages = read_message_set(records, max_decompressed_size=max_decompressed_size)
    if not messages:
        return b""
    codec = next((m.compression for m in messages if m.compression is not Compression.NONE), Compression.NONE)
    converted = [Record(index, m.timestamp, m.key, m.value) for index, m in enumerate(messages)]
    if any(m.timestamp_type is TimestampType.LOG_APPEND_TIME for m in messages):
        # Kept, so that the broker refuses it as it refuses a v2 batch that claims LogAppendTime.
        append_time = max(m.timestamp for m in messages)
        return build_batch(converted, compression=codec, timestamp_type=TimestampType.LOG_APPEND_TIME,
                           log_append_time=append_time)
    return build_batch(converted, compression=codec)


def downconvert(batches: Buffer, magic: int, *, max_bytes: int | None = None, first_offset: int | None = None) -> bytes:
    """Whole consecutive RecordBatch v2 (as read from the log) as a message set of ``magic``.

    Control batches are dropped. An uncompressed batch becomes one message
    per record; a compressed one becomes one wrapper of its codec. Records
    keep their absolute offsets; headers are dropped. Magic 1 keeps the
    timestamps and the LogAppendTime bit (a LogAppendTime batch gives its
    maxTimestamp to every message); magic 0 has no timestamps.

    ``first_offset`` (the fetch offset) drops the records below it from
    uncompressed batches; compressed batches go whole, as in Kafka.
    With ``max_bytes`` conversion stops before the output would pass it,
    but the first converted batch is always included whole, so a consumer
    makes progress. A ZSTD batch raises ``UnsupportedDownConversion`` when it
    would come first, and otherwise ends the output before it (the consumer
    meets the error on its next fetch). Corrupt batches raise
    ``CorruptRecordError``.
    """
    if magic not in (MAGIC_V0, MAGIC_V1):
        raise ValueError(f"cannot down-convert to magic {magic}: expected 0 or 1")
    out = bytearray()
    position = 0
    while position < len(batches):
        if max_bytes is not None and out and len(out) >= max_bytes:
            break
        header = validate_batch(batches, position)
        position += header.size
        if header.is_control:
            continue
        if header.compression == Compression.ZSTD:
            if out:
                break
            raise UnsupportedDownConversion(
                f"batch at offset {header.base_offset} is zstd-compressed, which magic {magic} cannot carry"
            )
        # validate_batch compared the CRC already.
        columns = decode_batch_columns(batches, header.position, check_crc=False)
        converted = _convert_batch(columns, magic, first_offset)
        if max_bytes is not None and out and len(out) + len(converted) > max_bytes:
            break
        out += converted
    return bytes(out)


def _convert_batch(columns: RecordColumns, magic: int, first_offset: int | None) -> bytes:
    header = columns.header
    codec = legacy_codec(header.compression, magic)
    offsets, timestamps = columns.offsets, columns.timestamps
    keys, values = columns.keys, columns.values
    indexes = range(len(offsets))
    if codec is Compression.NONE and first_offset is not None:
        indexes = [i for i in indexes if offsets[i] >= first_offset]
    if not indexes:
        return b""
    attributes = TIMESTAMP_TYPE_MASK if magic == MAGIC_V1 and header.is_log_append_time else 0
    if codec is Compression.NONE:
        out = bytearray()
        for i in indexes:
            _append_message(out, offsets[i], magic, attributes, timestamps[i], keys[i], values[i])
        return bytes(out)
    # Magic 1 inner offsets count from the first record; the wrapper takes the last's.
    base = offsets[0] if magic == MAGIC_V1 else 0
    inner = bytearray()
    for i in indexes:
        _append_message(inner, offsets[i] - base, magic, attributes, timestamps[i], keys[i], values[i])
    out = bytearray()
    wrapper_timestamp = header.max_timestamp if header.is_log_append_time else max(timestamps)
    value = compress_legacy(codec, magic, inner)
    _append_message(out, offsets[-1], magic, attributes | codec, wrapper_timestamp, None, value)
    return bytes(out)


def _append_message(
    out: bytearray, offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> None:
    """Append one entry (offset, size, message) to ``out``."""
    if magic == MAGIC_V0:
        body = bytearray(_BODY_V0.pack(magic, attributes))
    else:
        body = bytearray(_BODY_V1.pack(magic, attributes, timestamp))
    for field in (key, value):
        if field is None:
            body += _NULL
        else:
            body += _LENGTH.pack(len(field))
            body += field
    out += _ENTRY_HEAD.pack(offset, len(body) + 4, zlib.crc32(body))
    out += body
