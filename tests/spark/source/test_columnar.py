"""Column decoding gives what the per-record decoder gives, and rejects exactly what it rejects."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_ext.columnar import ColumnarBatch, decode_columnar
from spate.records import (
    Compression,
    CorruptRecordError,
    Record,
    TimestampType,
    build_batch,
    decode_batch_columns,
)
from spate.records.varint import encode_varint, encode_varlong

CODECS = st.sampled_from(list(Compression))
# Sizes either side of the one-, two- and three-byte length varints (64 and 8192).
payloads = st.none() | st.binary(max_size=20) | st.integers(60, 70).map(lambda n: b"x" * n) | st.sampled_from(
    [b"y" * 8191, b"z" * 8200]
)
header_lists = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=2).map(tuple)
# Offset gaps and timestamps big enough for multi-byte deltas of either sign.
gaps = st.integers(1, 3) | st.integers(60, 70) | st.integers(8000, 9000)
timestamps = st.integers(-1, 200) | st.integers(1 << 40, (1 << 40) + 100_000) | st.just((1 << 62))


@st.composite
def record_lists(draw, with_headers: bool) -> tuple[int, list[Record]]:
    base_offset = draw(st.integers(0, 1 << 40))
    offset = base_offset + draw(st.integers(0, 5))
    records = []
    for _ in range(draw(st.integers(1, 40))):
        records.append(
            Record(
                offset=offset,
                timestamp=draw(timestamps),
                key=draw(payloads),
                value=draw(payloads),
                headers=draw(header_lists) if with_headers and draw(st.booleans()) else (),
            )
        )
        offset += draw(gaps)
    return base_offset, records


@st.composite
def runs_of_one_size(draw) -> tuple[int, list[Record]]:
    """Records in runs of equal size (fixed key and value sizes per run), as fixed-size data comes."""
    base_offset = draw(st.integers(0, 1 << 40))
    offset = base_offset
    records = []
    for _ in range(draw(st.integers(1, 4))):
        key_size = draw(st.sampled_from([None, 0, 8]))
        value_size = draw(st.sampled_from([0, 5, 60, 100, 8190]))
        for _ in range(draw(st.integers(1, 120))):
            key = None if key_size is None else b"k" * key_size
            records.append(Record(offset=offset, timestamp=1_700_000_000_000, key=key, value=b"v" * value_size))
            offset += 1
    return base_offset, records


def assert_same(columnar: ColumnarBatch, buf: bytes, include_headers: bool, position: int = 0) -> None:
    expected = decode_batch_columns(buf, position)
    assert columnar.header == expected.header
    assert columnar.offsets.dtype == np.int64 and columnar.timestamps.dtype == np.int64
    assert columnar.offsets.tolist() == expected.offsets
    assert columnar.timestamps.tolist() == expected.timestamps
    assert columnar.keys.type == pa.binary() and columnar.values.type == pa.binary()
    assert columnar.keys.to_pylist() == expected.keys
    assert columnar.values.to_pylist() == expected.values
    if include_headers and any(expected.headers):
        assert columnar.headers == expected.headers
    else:
        assert columnar.headers is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_lists(with_headers=False), CODECS, st.booleans())
def test_columns_equal_the_per_record_decoder_for_any_records_and_codec(drawn, codec, log_append_time):
    base_offset, records = drawn
    kind = TimestampType.LOG_APPEND_TIME if log_append_time else TimestampType.CREATE_TIME
    buf = build_batch(
        records, base_offset=base_offset, compression=codec, timestamp_type=kind,
        log_append_time=1_700_000_000_000 if log_append_time else None,
    )
    assert_same(decode_columnar(buf, vector_threshold=1), buf, include_headers=False)
    assert_same(decode_columnar(buf), buf, include_headers=False)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs_of_one_size(), CODECS)
def test_runs_of_equal_sized_records_decode_like_the_per_record_decoder(drawn, codec):
    base_offset, records = drawn
    buf = build_batch(records, base_offset=base_offset, compression=codec)
    assert_same(decode_columnar(buf, vector_threshold=1), buf, include_headers=False)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_lists(with_headers=True), CODECS, st.booleans())
def test_records_with_headers_decode_alike_with_or_without_include_headers(drawn, codec, include_headers):
    base_offset, records = drawn
    buf = build_batch(records, base_offset=base_offset, compression=codec)
    assert_same(decode_columnar(buf, include_headers=include_headers, vector_threshold=1), buf, include_headers)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(record_lists(with_headers=False), CODECS), min_size=2, max_size=3))
def test_a_batch_decodes_at_its_position_in_a_buffer(batches):
    built = [build_batch(records, base_offset=base, compression=codec) for (base, records), codec in batches]
    buf = b"".join(built)
    position = len(built[0])
    assert_same(decode_columnar(buf, position, vector_threshold=1), buf, include_headers=False, position=position)


def test_a_batch_of_many_records_fills_every_column():
    records = [
        Record(offset=100 + 2 * i, timestamp=1_700_000_000_000 + i, key=None if i % 7 == 0 else b"%08d" % i,
               value=b"v" * (i % 150))
        for i in range(5000)
    ]
    buf = build_batch(records, base_offset=100)
    columns = decode_columnar(buf)
    assert len(columns) == 5000
    assert columns.timestamp_type is TimestampType.CREATE_TIME
    assert columns.offsets[-1] == 100 + 2 * 4999
    assert columns.keys.null_count == len(range(0, 5000, 7))
    assert columns.values[149].as_py() == b"v" * 149
    assert_same(columns, buf, include_headers=False)


def test_a_slice_keeps_rows_in_every_column():
    records = [Record(offset=i, timestamp=i, key=b"k%d" % i, value=b"v%d" % i, headers=(("h", b"%d" % i),))
               for i in range(10)]
    columns = decode_columnar(build_batch(records), include_headers=True).slice(3, 6)
    assert columns.offsets.tolist() == [3, 4, 5]
    assert columns.timestamps.tolist() == [3, 4, 5]
    assert columns.keys.to_pylist() == [b"k3", b"k4", b"k5"]
    assert columns.values.to_pylist() == [b"v3", b"v4", b"v5"]
    assert columns.headers == [(("h", b"3"),), (("h", b"4"),), (("h", b"5"),)]


# --- corrupt input -----------------------------------------------------------------------------------


def raw_batch(section: bytes, records_count: int, *, last_offset_delta: int = 1000, base_timestamp: int = 0) -> bytes:
    """A batch with a valid header and CRC around any records section."""
    header = struct.pack(
        ">qiibIhiqqqhii", 0, 49 + len(section), -1, 2, 0, 0, last_offset_delta, base_timestamp, base_timestamp,
        -1, -1, -1, records_count,
    )
    out = bytearray(header + section)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    return bytes(out)


def record(
    offset_delta: int,
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    *,
    timestamp_delta: bytes = encode_varlong(0),
    offset_field: bytes | None = None,
    key_field: bytes | None = None,
    value_field: bytes | None = None,
    tail: bytes = b"\x00",
    extra_length: int = 0,
) -> bytes:
    """One record's bytes; ``*_field`` replaces a field's encoding, ``tail`` is the headers part."""
    body = b"\x00" + timestamp_delta + (encode_varint(offset_delta) if offset_field is None else offset_field)
    for data, field in ((key, key_field), (value, value_field)):
        if field is not None:
            body += field
        else:
            body += encode_varint(-1) if data is None else encode_varint(len(data)) + data
    body += tail
    return encode_varint(len(body) + extra_length) + body


def good_records(count: int) -> bytes:
    return b"".join(record(i, b"key%d" % i, b"value%d" % i) for i in range(count))


def equal_records(count: int) -> list[bytes]:
    return [record(i, b"k", b"v" * 100) for i in range(count)]


def with_first_byte(data: bytes, byte: int) -> bytes:
    return bytes([byte]) + data[1:]


# Records of one size, where the decoder checks runs of them at once.
RUN = equal_records(40)

CORRUPT_SECTIONS = {
    "more records declared than the section can hold": (good_records(3), 1000),
    "fewer records than declared": (good_records(3), 4),
    "bytes after the last record": (good_records(3) + b"\x00\x00", 3),
    "a record length past the end": (good_records(2) + record(2, extra_length=5)[:-5] + b"\x00" * 5, 3),
    "a record length below the smallest body": (good_records(2) + encode_varint(3) + b"\x00" * 3, 3),
    "a negative record length": (good_records(2) + encode_varint(-8) + b"\x00" * 8, 3),
    "offset deltas not increasing": (record(0) + record(2) + record(2), 3),
    "an offset delta past lastOffsetDelta": (record(0) + record(1) + record(2000), 3),
    "a negative first offset delta": (record(-1) + record(1) + record(2), 3),
    "a negative key length other than -1": (record(0) + record(1, key_field=encode_varint(-2)) + record(2), 3),
    "a key running past its record": (record(0) + record(1, key_field=encode_varint(40) + b"kk") + record(2), 3),
    "a value running past its record": (record(0) + record(1, value_field=encode_varint(90) + b"vv") + record(2), 3),
    "fields shorter than the record length": (record(0) + record(1, tail=b"\x00\x00\x00") + record(2), 3),
    "an overlong offset delta varint": (record(0) + record(1, offset_field=b"\xff\xff\xff\xff\x7f") + record(2), 3),
    "a timestamp varlong overflowing": (
        record(0) + record(1, timestamp_delta=b"\xff" * 9 + b"\x02") + record(2), 3),
    "a header with a negative key length": (
        record(0) + record(1, tail=encode_varint(1) + encode_varint(-1) + b"\x00\x00") + record(2), 3),
    "a header key that is not UTF-8": (
        record(0) + record(1, tail=encode_varint(1) + encode_varint(1) + b"\xff" + encode_varint(-1)) + record(2), 3),
    "a negative length of the run's size inside a run": (
        b"".join(RUN[:20] + [with_first_byte(RUN[20], RUN[20][0] | 1)] + RUN[21:]), 40),
    "a length below the smallest body at the run's size inside a run": (
        b"".join([record(i, None, None) for i in range(20)]) + b"\x8a\x00" + b"\x00" * 5
        + b"".join(record(i, None, None) for i in range(21, 40)), 40),
    "a run reaching past the end of the section": (b"".join(RUN)[:-7], 40),
    "a run followed by trailing bytes": (b"".join(RUN) + b"\x00", 40),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_SECTIONS))
@pytest.mark.parametrize("vector_threshold", [1, 128])
def test_corrupt_records_sections_raise_in_both_decoders(case, vector_threshold):
    section, count = CORRUPT_SECTIONS[case]
    buf = raw_batch(section, count)
    with pytest.raises(CorruptRecordError):
        decode_batch_columns(buf)
    with pytest.raises(CorruptRecordError):
        decode_columnar(buf, vector_threshold=vector_threshold)


def test_the_hand_built_records_decode_when_intact():
    columns = decode_columnar(raw_batch(good_records(3), 3), vector_threshold=1)
    assert columns.keys.to_pylist() == [b"key0", b"key1", b"key2"]
    assert columns.values.to_pylist() == [b"value0", b"value1", b"value2"]
    smallest = b"".join(record(i, None, None) for i in range(40))
    assert len(decode_columnar(raw_batch(smallest, 40), vector_threshold=1)) == 40
    run = decode_columnar(raw_batch(b"".join(RUN), 40), vector_threshold=1)
    assert run.offsets.tolist() == list(range(40))


def test_a_timestamp_outside_int64_is_corrupt_in_columns():
    section = record(0) + record(1, timestamp_delta=encode_varlong(1 << 62)) + record(2)
    buf = raw_batch(section, 3, base_timestamp=(1 << 62))
    with pytest.raises(CorruptRecordError, match="int64"):
        decode_columnar(buf, vector_threshold=1)
    with pytest.raises(CorruptRecordError, match="int64"):
        decode_columnar(buf)


def test_a_damaged_crc_is_caught_unless_the_caller_checked_it():
    buf = bytearray(build_batch([Record(offset=i, timestamp=0, key=None, value=b"v") for i in range(200)]))
    buf[17] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        decode_columnar(bytes(buf))
    assert len(decode_columnar(bytes(buf), check_crc=False)) == 200


@st.composite
def damaged_batches(draw) -> bytes:
    """A valid uncompressed batch with bytes of its records section overwritten, CRC repaired."""
    base_offset, records = draw(record_lists(with_headers=True) | runs_of_one_size())
    batch = bytearray(build_batch(records, base_offset=base_offset))
    for _ in range(draw(st.integers(1, 3))):
        index = 61 + draw(st.integers(0, len(batch) - 62))
        garbage = draw(st.binary(min_size=1, max_size=4) | st.sampled_from([b"\x80", b"\xff\xff", b"\x01", b"\x00"]))
        batch[index : index + len(garbage)] = garbage
    if draw(st.booleans()):
        del batch[len(batch) - draw(st.integers(1, 2)) :]
    struct.pack_into(">i", batch, 8, len(batch) - 12)
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return bytes(batch)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_batches())
def test_damaged_records_raise_in_columns_exactly_when_the_per_record_decoder_raises(buf):
    try:
        expected = decode_batch_columns(buf)
    except CorruptRecordError:
        with pytest.raises(CorruptRecordError):
            decode_columnar(buf, include_headers=True, vector_threshold=1)
        return
    if any(t > (1 << 63) - 1 or t < -(1 << 63) for t in expected.timestamps):
        with pytest.raises(CorruptRecordError, match="int64"):
            decode_columnar(buf, include_headers=True, vector_threshold=1)
        return
    assert_same(decode_columnar(buf, include_headers=True, vector_threshold=1), buf, include_headers=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_batches(), st.sampled_from([b"\xff" * 32, b"\x00" * 32, b"\x80\x01" * 16]))
def test_a_batch_read_in_place_before_other_bytes_decodes_as_one_alone(buf, following):
    """Uncompressed batches followed by more bytes are read without a copy; what follows must not matter."""
    try:
        alone = decode_columnar(buf, include_headers=True, vector_threshold=1)
    except CorruptRecordError:
        with pytest.raises(CorruptRecordError):
            decode_columnar(buf + following, include_headers=True, vector_threshold=1)
        return
    in_place = decode_columnar(buf + following, include_headers=True, vector_threshold=1)
    assert in_place.offsets.tolist() == alone.offsets.tolist()
    assert in_place.timestamps.tolist() == alone.timestamps.tolist()
    assert in_place.keys.equals(alone.keys) and in_place.values.equals(alone.values)
    assert in_place.headers == alone.headers


@pytest.mark.parametrize("case", sorted(CORRUPT_SECTIONS))
def test_corrupt_records_sections_raise_when_read_in_place(case):
    section, count = CORRUPT_SECTIONS[case]
    buf = raw_batch(section, count) + b"\x81" * 32
    with pytest.raises(CorruptRecordError):
        decode_columnar(buf, vector_threshold=1)
