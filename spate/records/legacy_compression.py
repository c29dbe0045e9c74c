"""Compression of the legacy message formats (magic 0 and 1) as old clients expect it.

A compressed legacy message (a "wrapper") carries a whole inner message set,
compressed, as its value. The codecs are RecordBatch v2's (``compression.py``)
with these differences:

- ZSTD does not exist before magic 2: codec id 4 is as unknown as 5-7.
- SNAPPY is written in the xerial framing the Java producer writes (Java
  consumers of that age read it through ``SnappyInputStream``); raw snappy,
  as librdkafka writes it, is read as well.
- LZ4 under magic 0 was written by Kafka 0.8/0.9 with a wrong frame header
  checksum: computed over the 4 magic bytes plus the frame descriptor instead
  of the descriptor alone. Spate writes magic 0 LZ4 that way, so those
  clients can read it, and magic 1 LZ4 with the correct checksum. On read the
  header checksum is ignored whatever the magic (the message CRC covers those
  bytes anyway): it is replaced by the correct one before ``lz4.frame``,
  which insists on it, sees the frame.

LZ4 frame header (LZ4 frame format 1.6)::

    magic        4 bytes  04 22 4D 18
    FLG          1 byte   bits 7-6 version, 3 content size present, 0 dictionary id present
    BD           1 byte   block maximum size
    content size 8 bytes  only when FLG bit 3
    dictionary   4 bytes  only when FLG bit 0
    HC           1 byte   (xxh32(FLG..dictionary, seed 0) >> 8) & 0xFF
"""

from __future__ import annotations

import struct

import cramjam

from spate.records.compression import XERIAL_MAGIC, Compression, compress, decompress
from spate.records.errors import CorruptRecordError

LEGACY_CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4)

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_DESCRIPTOR_START = 4
_LZ4_FLG_CONTENT_SIZE = 0x08
_LZ4_FLG_DICTIONARY_ID = 0x01

# The xerial header's version and minimum compatible version, as snappy-java writes them.
_XERIAL_VERSIONS = struct.Struct(">ii").pack(1, 1)
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default block size
_INT32 = struct.Struct(">i")

_PRIME1 = 0x9E3779B1
_PRIME2 = 0x85EBCA77
_PRIME3 = 0xC2B2AE3D
_PRIME4 = 0x27D4EB2F
_PRIME5 = 0x165667B1
_MASK32 = 0xFFFFFFFF
_LANES = struct.Struct("<IIII")
_WORD = struct.Struct("<I")


def legacy_codec(codec_id: int, magic: int) -> Compression:
    """The ``Compression`` of a legacy message's codec id; ZSTD and unknown ids are corrupt."""
    if 0 <= codec_id < len(LEGACY_CODECS):
        return LEGACY_CODECS[codec_id]
    raise CorruptRecordError(f"compression codec {codec_id} does not exist for magic {magic} messages")


def compress_legacy(codec: Compression, magic: int, data: bytes | bytearray) -> bytes:
    """Compress an inner message set as clients of ``magic`` expect it."""
    if codec is Compression.SNAPPY:
        return _xerial_snappy(data)
    if codec is Compression.LZ4:
        frame = compress(Compression.LZ4, data)
        # Kafka 0.8/0.9 read magic 0 LZ4 only with their own (wrong) header checksum.
        return _with_header_checksum(frame, broken=True) if magic == 0 else frame
    if codec in (Compression.NONE, Compression.GZIP):
        return compress(codec, data)
    raise ValueError(f"{codec.name} cannot compress magic {magic} messages")


def decompress_legacy(codec: Compression, data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    """Decompress a wrapper's value; past ``max_size`` bytes or malformed raises ``CorruptRecordError``."""
    if codec is Compression.LZ4:
        data = _with_header_checksum(bytes(data), broken=False)
    return decompress(codec, data, max_size)


def _xerial_snappy(data: bytes | bytearray) -> bytes:
    out = bytearray(XERIAL_MAGIC)
    out += _XERIAL_VERSIONS
    view = memoryview(data)
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def lz4_header_checksum_position(frame: bytes) -> int | None:
    """Where the HC byte of the LZ4 frame opening ``frame`` sits, or None when it is no frame header."""
    if len(frame) < _LZ4_DESCRIPTOR_START + 2 or not frame.startswith(LZ4_FRAME_MAGIC):
        return None
    flg = frame[_LZ4_DESCRIPTOR_START]
    position = _LZ4_DESCRIPTOR_START + 2
    if flg & _LZ4_FLG_CONTENT_SIZE:
        position += 8
    if flg & _LZ4_FLG_DICTIONARY_ID:
        position += 4
    return position if position < len(frame) else None


def _with_header_checksum(frame: bytes, *, broken: bool) -> bytes:
    """``frame`` with its header checksum rewritten: correct, or as Kafka 0.8/0.9 computed it.

    Bytes that do not open with a whole frame header are returned unchanged,
    for the decompressor to refuse.
    """
    position = lz4_header_checksum_position(frame)
    if position is None:
        return frame
    covered = frame[:position] if broken else frame[_LZ4_DESCRIPTOR_START:position]
    checksum = (xxh32(covered) >> 8) & 0xFF
    return frame[:position] + bytes((checksum,)) + frame[position + 1 :]


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK32


def _round(accumulator: int, lane: int) -> int:
    return (_rotl((accumulator + lane * _PRIME2) & _MASK32, 13) * _PRIME1) & _MASK32


def xxh32(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """XXH32 of ``data`` (the LZ4 frame format's checksum), in pure Python.

    Meant for the few bytes of a frame descriptor; it runs a Python loop per
    4 bytes, so it is no tool for bulk data.
    """
    data = bytes(data)
    length = len(data)
    position = 0
    if length >= 16:
        v1 = (seed + _PRIME1 + _PRIME2) & _MASK32
        v2 = (seed + _PRIME2) & _MASK32
        v3 = seed & _MASK32
        v4 = (seed - _PRIME1) & _MASK32
        while position <= length - 16:
            lane1, lane2, lane3, lane4 = _LANES.unpack_from(data, position)
            v1, v2 = _round(v1, lane1), _round(v2, lane2)
            v3, v4 = _round(v3, lane3), _round(v4, lane4)
            position += 16
        digest = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK32
    else:
        digest = (seed + _PRIME5) & _MASK32
    digest = (digest + length) & _MASK32
    while position + 4 <= length:
        (word,) = _WORD.unpack_from(data, position)
        digest = (_rotl((digest + word * _PRIME3) & _MASK32, 17) * _PRIME4) & _MASK32
        position += 4
    while position < length:
        digest = (_rotl((digest + data[position] * _PRIME5) & _MASK32, 11) * _PRIME1) & _MASK32
        position += 1
    digest ^= digest >> 15
    digest = (digest * _PRIME2) & _MASK32
    digest ^= digest >> 13
    digest = (digest * _PRIME3) & _MASK32
    digest ^= digest >> 16
    return digest
