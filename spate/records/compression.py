"""Compression codecs for the records section of a RecordBatch v2.

The codec id lives in bits 0-2 of the batch attributes. What each codec's
bytes look like on the wire:

- GZIP (1): a gzip stream (RFC 1952); several concatenated members are read
  as one stream, as Java's ``GZIPInputStream`` does.
- SNAPPY (2): written as raw snappy, as librdkafka writes it. Read either raw
  snappy or the xerial framing the Java client writes::

      magic   8 bytes   0x82 'SNAPPY' 0x00
      version int32     (ignored: some writers get the byte order wrong)
      compat  int32     (ignored)
      blocks  [int32 length, raw snappy block of that length] ...

- LZ4 (3): the LZ4 frame format, written with independent 64 KiB blocks and
  no content size, like Kafka's Java client. Concatenated frames are read.
- ZSTD (4): zstd frames.

Decompression is bounded: output past ``max_size`` raises
``CorruptRecordError`` without first materialising the whole output. gzip and
LZ4 stream with a cap on each step; snappy's declared lengths are checked
before anything is decompressed; zstd decompresses into a buffer that grows
geometrically up to ``max_size`` (starting at the frame's declared content
size when it has one). Malformed compressed data of any codec, and an
unknown codec id, raise ``CorruptRecordError``.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum

import cramjam
import lz4.frame

from spate.records.errors import CorruptRecordError

DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER_SIZE = 16
_INT32 = struct.Struct(">i")

_GZIP_WBITS = 31  # zlib's window bits for the gzip container
_GZIP_LEVEL = 6  # zlib's default, as Java's GZIPOutputStream uses

# zstd output guesses start here when a frame does not declare its size, then
# grow by _ZSTD_GROWTH; the growth bounds the repeated work to a third extra.
_ZSTD_MIN_GUESS = 64 * 1024
_ZSTD_GROWTH = 4
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# What cramjam reports when the output buffer is too small (Rust's io error
# for a short write); any other failure means the input itself is bad.
_ZSTD_BUFFER_FULL = "failed to write whole buffer"


class Compression(IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


def codec_of(codec_id: int) -> Compression:
    """The ``Compression`` for an attributes codec id; unknown ids are corrupt."""
    try:
        return Compression(codec_id)
    except ValueError:
        raise CorruptRecordError(f"unknown compression codec {codec_id}") from None


def compress(codec: Compression | int, data: bytes | bytearray | memoryview) -> bytes:
    """Compress a records section with ``codec``; an unknown codec is a ``ValueError``."""
    codec = Compression(codec)
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        compressor = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
        return compressor.compress(data) + compressor.flush()
    if codec is Compression.SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if codec is Compression.LZ4:
        return lz4.frame.compress(
            data,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            store_size=False,
        )
    return bytes(cramjam.zstd.compress(data))


def decompress(
    codec: Compression | int,
    data: bytes | bytearray | memoryview,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bytes:
    """Decompress a records section; more than ``max_size`` bytes of output is corrupt."""
    codec = codec_of(codec)
    if codec is Compression.NONE:
        if len(data) > max_size:
            raise _too_large(codec, max_size)
        return bytes(data)
    if codec is Compression.GZIP:
        return _gunzip(data, max_size)
    if codec is Compression.SNAPPY:
        return _unsnappy(data, max_size)
    if codec is Compression.LZ4:
        return _unlz4(data, max_size)
    return _unzstd(data, max_size)


def _too_large(codec: Compression, max_size: int) -> CorruptRecordError:
    return CorruptRecordError(f"{codec.name.lower()} records decompress past the limit of {max_size} bytes")


def _gunzip(data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    pending = bytes(data)
    decompressor = zlib.decompressobj(_GZIP_WBITS)
    while True:
        try:
            chunk = decompressor.decompress(pending, max_size - total + 1)
        except zlib.error as exc:
            raise CorruptRecordError(f"gzip records are corrupt: {exc}") from exc
        total += len(chunk)
        if total > max_size:
            raise _too_large(Compression.GZIP, max_size)
        chunks.append(chunk)
        if decompressor.eof:
            pending = decompressor.unused_data
            if not pending:
                return b"".join(chunks)
            decompressor = zlib.decompressobj(_GZIP_WBITS)
        elif decompressor.unconsumed_tail:
            pending = decompressor.unconsumed_tail
        else:
            # Fewer bytes than asked for, input used up, stream not finished.
            raise CorruptRecordError("gzip records are truncated")


def _unlz4(data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    pending = bytes(data)
    if not pending:
        raise CorruptRecordError("lz4 records are empty")
    decompressor = lz4.frame.LZ4FrameDecompressor()
    while True:
        try:
            chunk = decompressor.decompress(pending, max_length=max_size - total + 1)
        except RuntimeError as exc:
            raise CorruptRecordError(f"lz4 records are corrupt: {exc}") from exc
        total += len(chunk)
        if total > max_size:
            raise _too_large(Compression.LZ4, max_size)
        chunks.append(chunk)
        if decompressor.eof:
            pending = decompressor.unused_data
            if not pending:
                return b"".join(chunks)
            decompressor = lz4.frame.LZ4FrameDecompressor()
        elif decompressor.needs_input:
            raise CorruptRecordError("lz4 records are truncated")
        elif not chunk and not pending:
            raise CorruptRecordError("lz4 records make no progress")
        else:
            pending = b""


def _unsnappy(data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    raw = bytes(data)
    if raw.startswith(XERIAL_MAGIC):
        return _unsnappy_xerial(raw, max_size)
    _check_snappy_length(raw, max_size)
    return _snappy_block(raw)


def _check_snappy_length(block: bytes, max_size: int) -> int:
    # Raw snappy opens with a varint of the uncompressed length, so a bomb is
    # caught before any output is allocated.
    try:
        declared = cramjam.snappy.decompress_raw_len(block)
    except Exception as exc:  # cramjam's error types vary by version
        raise CorruptRecordError(f"snappy records are corrupt: {exc}") from exc
    if declared > max_size:
        raise _too_large(Compression.SNAPPY, max_size)
    return declared


def _snappy_block(block: bytes) -> bytes:
    try:
        return bytes(cramjam.snappy.decompress_raw(block))
    except Exception as exc:  # cramjam's error types vary by version
        raise CorruptRecordError(f"snappy records are corrupt: {exc}") from exc


def _unsnappy_xerial(raw: bytes, max_size: int) -> bytes:
    if len(raw) < XERIAL_HEADER_SIZE:
        raise CorruptRecordError("xerial snappy header is truncated")
    blocks: list[bytes] = []
    total = 0
    pos = XERIAL_HEADER_SIZE
    # First pass: frame every block and add up the declared sizes.
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise CorruptRecordError("xerial snappy block length is truncated")
        (size,) = _INT32.unpack_from(raw, pos)
        pos += 4
        if size < 0 or pos + size > len(raw):
            raise CorruptRecordError(f"xerial snappy block of {size} bytes does not fit the data")
        block = raw[pos : pos + size]
        pos += size
        total += _check_snappy_length(block, max_size)
        if total > max_size:
            raise _too_large(Compression.SNAPPY, max_size)
        blocks.append(block)
    return b"".join(_snappy_block(block) for block in blocks)


def _zstd_declared_size(data: bytes) -> int | None:
    """Frame_Content_Size of the first zstd frame, when its header carries one."""
    if len(data) < 5 or not data.startswith(_ZSTD_MAGIC):
        return None
    descriptor = data[4]
    size_flag = descriptor >> 6
    single_segment = bool(descriptor & 0x20)
    dictionary_id_size = (0, 1, 2, 4)[descriptor & 0x03]
    field_size = (1 if single_segment else 0, 2, 4, 8)[size_flag]
    if field_size == 0:
        return None
    start = 5 + (0 if single_segment else 1) + dictionary_id_size
    if start + field_size > len(data):
        return None
    declared = int.from_bytes(data[start : start + field_size], "little")
    # The two-byte form stores the size less 256.
    return declared + 256 if field_size == 2 else declared


def _unzstd(data: bytes | bytearray | memoryview, max_size: int) -> bytes:
    raw = bytes(data)
    declared = _zstd_declared_size(raw)
    if declared is not None and declared > max_size:
        raise _too_large(Compression.ZSTD, max_size)
    if declared is not None:
        capacity = max(1, min(max_size, declared))
    else:
        capacity = max(1, min(max_size, max(_ZSTD_MIN_GUESS, len(raw) * _ZSTD_GROWTH)))
    while True:
        out = bytearray(capacity)
        try:
            written = cramjam.zstd.decompress_into(raw, out)
        except Exception as exc:  # cramjam raises one error type for every failure
            if _ZSTD_BUFFER_FULL not in str(exc):
                raise CorruptRecordError(f"zstd records are corrupt: {exc}") from exc
            if capacity >= max_size:
                raise _too_large(Compression.ZSTD, max_size) from exc
            capacity = min(max_size, capacity * _ZSTD_GROWTH)
            continue
        return bytes(memoryview(out)[:written])
