"""Legacy messages written by hand from the documented layout, and the records the legacy tests share."""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame

from spate.records import MAGIC_V0, MAGIC_V1, Compression, Record, TimestampType, build_batch
from spate.records.compression import decompress
from spate.records.legacy_compression import lz4_header_checksum_position, xxh32

LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
MAGICS = [MAGIC_V0, MAGIC_V1]
CREATE, APPEND = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME

# Values repeat so that every codec shrinks them.
RECORDS = [
    Record(offset=100, timestamp=1_700_000_000_000, key=b"key-0", value=b"value " * 40, headers=(("trace", b"x"),)),
    Record(offset=101, timestamp=1_700_000_000_250, key=None, value=b"null key " * 30),
    Record(offset=102, timestamp=1_699_999_999_000, key=b"key-2", value=None),
    Record(offset=103, timestamp=1_700_000_000_100, key=b"", value=b""),
    Record(offset=104, timestamp=1_700_000_003_000, key=b"k" * 300, value=bytes(range(256)) * 8),
]
MAX_TIMESTAMP = max(r.timestamp for r in RECORDS)
APPEND_TIME = 1_800_000_000_000


def message(offset, value, *, magic=MAGIC_V1, key=None, attributes=0, timestamp=1_000, crc=None) -> bytes:
    """One entry of a message set, from the documented layout."""
    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", timestamp) if magic == MAGIC_V1 else b"")
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body) if crc is None else crc) + body


def wrapper(offset, inner: bytes, *, magic=MAGIC_V1, codec=Compression.GZIP, attributes=0, timestamp=1_000) -> bytes:
    value = {
        Compression.GZIP: lambda data: zlib.compress(data, wbits=31),
        Compression.SNAPPY: lambda data: bytes(cramjam.snappy.compress_raw(data)),
        Compression.LZ4: lz4.frame.compress,
    }[codec](inner)
    return message(offset, value, magic=magic, attributes=attributes | codec, timestamp=timestamp)


def log_append_time_batch(codec: Compression) -> bytes:
    return build_batch(RECORDS, base_offset=100, compression=codec, timestamp_type=APPEND, log_append_time=APPEND_TIME)


def as_tuples(messages) -> list[tuple]:
    return [(m.offset, m.timestamp, m.key, m.value) for m in messages]


def expected_tuples(magic, records=RECORDS, *, append_time=None) -> list[tuple]:
    def timestamp(record):
        if magic == MAGIC_V0:
            return -1
        return record.timestamp if append_time is None else append_time

    return [(r.offset, timestamp(r), r.key, r.value) for r in records]


def entries(message_set: bytes) -> list[tuple[int, int, int]]:
    """(offset, magic, attributes) of each top-level entry."""
    found, position = [], 0
    while position < len(message_set):
        offset, size, _crc, magic, attributes = struct.unpack_from(">qiIbb", message_set, position)
        assert size > 0
        found.append((offset, magic, attributes))
        position += 12 + size
    return found


def inner_offsets(message_set: bytes, codec: Compression) -> list[int]:
    """The offsets written inside the single wrapper of ``message_set``."""
    (size,) = struct.unpack_from(">i", message_set, 8)
    key_position = 18 + (8 if message_set[16] == MAGIC_V1 else 0)  # after offset, size, crc, magic, attributes
    key_length, value_length = struct.unpack_from(">ii", message_set, key_position)
    assert key_length == -1
    compressed = message_set[key_position + 8 : key_position + 8 + value_length]
    if codec is Compression.LZ4:
        position = lz4_header_checksum_position(compressed)
        fixed = bytes(((xxh32(compressed[4:position]) >> 8) & 0xFF,))
        compressed = compressed[:position] + fixed + compressed[position + 1 :]
    return [offset for offset, _, _ in entries(decompress(codec, compressed))]


def flipped(data: bytes, position: int) -> bytes:
    """``data`` with one bit of the byte at ``position`` flipped."""
    return data[:position] + bytes((data[position] ^ 0x01,)) + data[position + 1 :]
