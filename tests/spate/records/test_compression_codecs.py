"""Record-section codecs: round trips, wire variants, corrupt input and bombs."""

from __future__ import annotations

import gzip
import struct
import tracemalloc

import cramjam
import lz4.frame
import pytest

from spate.records.compression import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    XERIAL_MAGIC,
    Compression,
    compress,
    decompress,
)
from spate.records.errors import CorruptRecordError

CODECS = list(Compression)
COMPRESSING = [codec for codec in Compression if codec is not Compression.NONE]
MIB = 1024 * 1024

PAYLOADS = {
    "empty": b"",
    "one-byte": b"x",
    "text": b"the quick brown fox jumps over the lazy dog " * 50,
    "binary": bytes(range(256)) * 1000,
}


def xerial(*chunks: bytes, version: bytes = struct.pack(">ii", 1, 1)) -> bytes:
    """The Java client's snappy framing: magic, two version ints, length-prefixed raw blocks."""
    out = bytearray(XERIAL_MAGIC + version)
    for chunk in chunks:
        block = bytes(cramjam.snappy.compress_raw(chunk))
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_every_codec_round_trips(codec, payload):
    assert decompress(codec, compress(codec, payload)) == payload


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_codecs_accept_bytearray_and_memoryview(codec):
    payload = PAYLOADS["text"]
    compressed = compress(codec, bytearray(payload))
    assert decompress(codec, memoryview(bytearray(compressed))) == payload


def test_codec_ids_match_the_attribute_bits():
    assert [int(c) for c in Compression] == [0, 1, 2, 3, 4]
    assert [c.name for c in Compression] == ["NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD"]


def test_default_limit_is_64_mib():
    assert DEFAULT_MAX_DECOMPRESSED_SIZE == 64 * MIB


def test_gzip_writes_a_standard_gzip_stream():
    assert gzip.decompress(compress(Compression.GZIP, b"payload")) == b"payload"


def test_gzip_reads_concatenated_members():
    data = gzip.compress(b"first ") + gzip.compress(b"second")
    assert decompress(Compression.GZIP, data) == b"first second"


def test_snappy_writes_raw_snappy_like_librdkafka():
    compressed = compress(Compression.SNAPPY, PAYLOADS["text"])
    assert not compressed.startswith(XERIAL_MAGIC)
    assert bytes(cramjam.snappy.decompress_raw(compressed)) == PAYLOADS["text"]


def test_snappy_reads_the_xerial_framing_of_the_java_client():
    chunks = [b"a" * 32768, bytes(range(256)) * 100, b"tail"]
    assert decompress(Compression.SNAPPY, xerial(*chunks)) == b"".join(chunks)


def test_snappy_xerial_ignores_version_fields_written_little_endian():
    assert decompress(Compression.SNAPPY, xerial(b"abc", version=struct.pack("<ii", 1, 1))) == b"abc"


def test_snappy_xerial_with_no_blocks_is_empty():
    assert decompress(Compression.SNAPPY, xerial()) == b""


@pytest.mark.parametrize(
    "data, message",
    [
        (XERIAL_MAGIC + b"\x00\x00\x00\x01", "header is truncated"),
        (xerial(b"abc") + b"\x00\x00", "length is truncated"),
        (xerial() + struct.pack(">i", 100) + b"short", "does not fit"),
        (xerial() + struct.pack(">i", -1), "does not fit"),
        (xerial() + struct.pack(">i", 3) + b"\xff\xff\xff", "corrupt"),
    ],
    ids=["short-header", "short-block-length", "block-past-end", "negative-block-length", "bad-block"],
)
def test_malformed_xerial_snappy_is_corrupt(data, message):
    with pytest.raises(CorruptRecordError, match=message):
        decompress(Compression.SNAPPY, data)


def test_lz4_writes_independent_blocks_without_content_size_like_the_java_client():
    info = lz4.frame.get_frame_info(compress(Compression.LZ4, PAYLOADS["binary"]))
    assert info["block_linked"] is False
    assert info["content_size"] == 0
    assert info["block_size"] == 64 * 1024


def test_lz4_reads_frames_with_content_size_and_checksums():
    data = lz4.frame.compress(PAYLOADS["binary"], store_size=True, content_checksum=True, block_checksum=True)
    assert decompress(Compression.LZ4, data) == PAYLOADS["binary"]


def test_zstd_reads_concatenated_frames():
    data = compress(Compression.ZSTD, b"first ") + compress(Compression.ZSTD, b"second")
    assert decompress(Compression.ZSTD, data) == b"first second"


def test_zstd_frame_without_content_size_larger_than_the_first_guess_decodes():
    # A streaming compressor leaves the size out, so the reader must grow its
    # buffer; this pins that growing works with the installed zstd binding.
    payload = bytes(range(256)) * 8192  # 2 MiB, well past the initial guess
    compressor = cramjam.zstd.Compressor()
    compressor.compress(payload)
    data = bytes(compressor.finish())
    assert decompress(Compression.ZSTD, data) == payload


@pytest.mark.parametrize("codec_id", [5, 6, 7, -1])
def test_unknown_codec_in_data_is_corrupt(codec_id):
    with pytest.raises(CorruptRecordError, match="unknown compression codec"):
        decompress(codec_id, b"data")


def test_compressing_with_an_unknown_codec_is_a_caller_error():
    with pytest.raises(ValueError, match="not a valid Compression") as raised:
        compress(5, b"data")
    assert not isinstance(raised.value, CorruptRecordError)


@pytest.mark.parametrize("codec", COMPRESSING, ids=lambda c: c.name)
@pytest.mark.parametrize("garbage", [b"", b"\x05", b"not compressed at all" * 3, b"\xff" * 64])
def test_garbage_is_corrupt_for_every_codec(codec, garbage):
    with pytest.raises(CorruptRecordError):
        decompress(codec, garbage)


@pytest.mark.parametrize("codec", COMPRESSING, ids=lambda c: c.name)
def test_truncated_compressed_data_is_corrupt(codec):
    data = compress(codec, PAYLOADS["binary"])
    for cut in (1, len(data) // 2, len(data) - 1):
        with pytest.raises(CorruptRecordError):
            decompress(codec, data[:cut])


@pytest.mark.parametrize("codec", COMPRESSING, ids=lambda c: c.name)
def test_trailing_garbage_after_the_compressed_stream_is_corrupt(codec):
    with pytest.raises(CorruptRecordError):
        decompress(codec, compress(codec, PAYLOADS["text"]) + b"\x01garbage")


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_output_exactly_at_the_limit_is_accepted(codec):
    payload = PAYLOADS["binary"]
    assert decompress(codec, compress(codec, payload), max_size=len(payload)) == payload


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_output_one_byte_past_the_limit_is_corrupt(codec):
    payload = PAYLOADS["binary"]
    with pytest.raises(CorruptRecordError, match="past the limit"):
        decompress(codec, compress(codec, payload), max_size=len(payload) - 1)


@pytest.fixture(scope="module")
def zero_bombs() -> dict[str, bytes]:
    """100 MiB of zeros in every compressed form a reader may meet."""
    zeros = bytes(100 * MIB)
    bombs = {codec.name: compress(codec, zeros) for codec in COMPRESSING}
    bombs["SNAPPY-xerial"] = xerial(*(zeros[i : i + 4 * MIB] for i in range(0, len(zeros), 4 * MIB)))
    bombs["LZ4-with-size"] = lz4.frame.compress(zeros, store_size=True)
    streaming = cramjam.zstd.Compressor()
    streaming.compress(zeros)
    bombs["ZSTD-without-size"] = bytes(streaming.finish())
    return bombs


BOMBS = [
    "GZIP",
    "SNAPPY",
    "SNAPPY-xerial",
    "LZ4",
    "LZ4-with-size",
    "ZSTD",
    "ZSTD-without-size",
]


@pytest.mark.parametrize("bomb", BOMBS)
def test_decompression_bomb_is_corrupt_without_a_large_allocation(zero_bombs, bomb):
    codec = Compression[bomb.split("-")[0]]
    tracemalloc.start()
    try:
        with pytest.raises(CorruptRecordError, match="past the limit"):
            decompress(codec, zero_bombs[bomb], max_size=MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The compressed input itself is the largest thing that may be copied.
    assert peak < 4 * MIB + len(zero_bombs[bomb])
