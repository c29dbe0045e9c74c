"""Decoding batches into records, and rejecting every malformed batch."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from spate.records import (
    Compression,
    ControlType,
    CorruptRecordError,
    Record,
    build_batch,
    build_control_batch,
    compress,
    decode_batch,
    decode_batch_columns,
    iter_decoded_batches,
    iter_records,
)

RECORDS = [
    Record(offset=10, timestamp=1_700_000_000_000, key=b"k1", value=b"v1", headers=(("h", b"1"),)),
    Record(offset=11, timestamp=1_700_000_000_005, key=None, value=b"v2"),
    Record(offset=13, timestamp=1_699_999_999_000, key=b"k3", value=None, headers=(("a", None), ("b", b""))),
]


def raw_batch(
    section: bytes,
    records_count: int,
    *,
    attributes: int = 0,
    last_offset_delta: int | None = None,
    base_offset: int = 0,
    base_timestamp: int = 1000,
    max_timestamp: int = 1000,
) -> bytes:
    """A batch around an arbitrary records section, built without the builder."""
    delta = max(records_count - 1, 0) if last_offset_delta is None else last_offset_delta
    body = struct.pack(
        ">hiqqqhii", attributes, delta, base_timestamp, max_timestamp, -1, -1, -1, records_count
    ) + section
    return struct.pack(">qiibI", base_offset, 9 + len(body), -1, 2, crc32c(body)) + body


def record_bytes(offset_delta: int, key: bytes = b"k", value: bytes = b"v") -> bytes:
    """An uncompressed record with timestampDelta 0 and no headers."""
    body = b"\x00\x00" + bytes([offset_delta << 1]) + bytes([len(key) << 1]) + key + bytes([len(value) << 1]) + value + b"\x00"
    return bytes([len(body) << 1]) + body


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_decoded_records_have_absolute_offsets_and_timestamps(codec):
    decoded = decode_batch(build_batch(RECORDS, base_offset=10, compression=codec))
    assert decoded.records == RECORDS
    assert decoded.header.compression == codec


def test_columns_hold_the_same_records_as_parallel_lists():
    columns = decode_batch_columns(build_batch(RECORDS, base_offset=10))
    assert len(columns) == 3
    assert columns.offsets == [10, 11, 13]
    assert columns.timestamps == [r.timestamp for r in RECORDS]
    assert columns.keys == [b"k1", None, b"k3"]
    assert columns.values == [b"v1", b"v2", None]
    assert columns.headers == [(("h", b"1"),), (), (("a", None), ("b", b""))]


def test_fields_come_out_as_bytes_whatever_the_buffer_type():
    batch = build_batch(RECORDS, base_offset=10)
    for buf in (bytearray(batch), memoryview(batch)):
        records = decode_batch(buf).records
        assert records == RECORDS
        assert all(type(r.value) is bytes for r in records if r.value is not None)


def test_decode_at_a_position_inside_a_buffer():
    first = build_batch(RECORDS[:1], base_offset=10)
    second = build_batch(RECORDS[1:], base_offset=11, compression=Compression.LZ4)
    decoded = decode_batch(first + second, len(first))
    assert decoded.records == RECORDS[1:]
    assert decoded.header.position == len(first)


def test_iter_records_walks_consecutive_batches_and_skips_control_records():
    buf = (
        build_batch(RECORDS[:2], base_offset=10, compression=Compression.GZIP)
        + build_batch(RECORDS[2:], base_offset=13, compression=Compression.ZSTD)
        + build_control_batch(ControlType.COMMIT, 1, 0, 0, timestamp=5, base_offset=14)
    )
    assert list(iter_records(buf)) == RECORDS
    with_markers = list(iter_records(buf, include_control=True))
    assert [r.offset for r in with_markers] == [10, 11, 13, 14]
    assert [b.header.is_control for b in iter_decoded_batches(buf)] == [False, False, True]


def test_iter_records_raises_on_a_partial_batch_at_the_end():
    batch = build_batch(RECORDS, base_offset=10)
    seen = []
    with pytest.raises(CorruptRecordError, match="truncated"):
        for record in iter_records(batch + batch[:30]):
            seen.append(record)
    assert seen == RECORDS


def test_every_truncation_of_a_batch_is_corrupt():
    batch = build_batch(RECORDS, base_offset=10)
    for cut in range(len(batch)):
        with pytest.raises(CorruptRecordError):
            decode_batch(batch[:cut])


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE], ids=lambda c: c.name)
def test_every_truncation_of_a_compressed_section_is_corrupt(codec):
    section = record_bytes(0) + record_bytes(1)
    compressed = compress(codec, section)
    for cut in range(len(compressed)):
        with pytest.raises(CorruptRecordError):
            decode_batch(raw_batch(compressed[:cut], 2, attributes=codec))


def test_wrong_magic_is_corrupt():
    batch = bytearray(build_batch(RECORDS, base_offset=10))
    batch[16] = 1
    with pytest.raises(CorruptRecordError, match="magic 1"):
        decode_batch(batch)


def test_bad_crc_is_corrupt():
    batch = bytearray(build_batch(RECORDS, base_offset=10))
    batch[-1] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC"):
        decode_batch(batch)


def test_negative_key_length_is_corrupt():
    section = bytes.fromhex("0c" "00" "00" "00" "03" "00" "00")
    with pytest.raises(CorruptRecordError, match="negative key length"):
        decode_batch(raw_batch(section, 1))


def test_varint_overflow_in_a_record_is_corrupt():
    section = bytes.fromhex("16" "00" "00" "ffffffffff01" "01" "01" "00")
    with pytest.raises(CorruptRecordError, match="varint overflow"):
        decode_batch(raw_batch(section, 1))


def test_fewer_records_than_the_count_is_corrupt():
    section = record_bytes(0, value=b"v" * 20) + record_bytes(1, value=b"v" * 20)
    with pytest.raises(CorruptRecordError, match="declares 3 records but holds 2"):
        decode_batch(raw_batch(section, 3))


def test_more_records_than_the_count_is_corrupt():
    section = record_bytes(0) + record_bytes(1)
    with pytest.raises(CorruptRecordError, match="after its 1 records"):
        decode_batch(raw_batch(section, 1, last_offset_delta=1))


def test_trailing_garbage_in_the_records_section_is_corrupt():
    with pytest.raises(CorruptRecordError, match="2 bytes after"):
        decode_batch(raw_batch(record_bytes(0) + b"\x00\x00", 1))


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE], ids=lambda c: c.name)
def test_trailing_garbage_inside_a_compressed_section_is_corrupt(codec):
    section = compress(codec, record_bytes(0) + b"\x00garbage")
    with pytest.raises(CorruptRecordError, match="bytes after"):
        decode_batch(raw_batch(section, 1, attributes=codec))


def test_a_huge_record_count_fails_before_decoding():
    with pytest.raises(CorruptRecordError, match="cannot hold"):
        decode_batch(raw_batch(record_bytes(0), 2**31 - 1, last_offset_delta=2**31 - 1))


@pytest.mark.parametrize("deltas", [(1, 0), (0, 0), (0, 5)], ids=["decreasing", "repeated", "past-last-offset-delta"])
def test_offset_deltas_must_increase_within_the_batch_span(deltas):
    section = b"".join(record_bytes(d) for d in deltas)
    with pytest.raises(CorruptRecordError, match="offset delta"):
        decode_batch(raw_batch(section, 2, last_offset_delta=2))


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_bits_are_corrupt(codec_id):
    with pytest.raises(CorruptRecordError, match="unknown compression codec"):
        decode_batch(raw_batch(record_bytes(0), 1, attributes=codec_id))


def test_an_empty_section_with_codec_bits_and_no_records_decodes_to_nothing():
    assert decode_batch(raw_batch(b"", 0, attributes=Compression.ZSTD)).records == []


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE], ids=lambda c: c.name)
def test_a_batch_decompressing_past_the_limit_is_corrupt(codec):
    records = [Record(offset=i, timestamp=0, key=None, value=bytes(10_000)) for i in range(200)]
    batch = build_batch(records, compression=codec)
    with pytest.raises(CorruptRecordError, match="past the limit"):
        decode_batch(batch, max_decompressed_size=1024 * 1024)
    assert len(decode_batch(batch, max_decompressed_size=4 * 1024 * 1024).records) == 200


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE], ids=lambda c: c.name)
def test_a_bomb_batch_of_100_mib_of_zeros_is_corrupt_with_a_1_mib_limit(codec):
    zeros = bytes(100 * 1024 * 1024)
    batch = raw_batch(compress(codec, zeros), 1, attributes=codec)
    del zeros
    with pytest.raises(CorruptRecordError, match="past the limit"):
        decode_batch(batch, max_decompressed_size=1024 * 1024)
