"""Wire primitives: byte tables checked both ways, plus bounds and malformed input."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.protocol import types as t
from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError


def encode(codec: t.Codec, value: object) -> bytes:
    buf = bytearray()
    codec.encode(buf, value)
    return bytes(buf)


def decode(codec: t.Codec, data: bytes) -> object:
    value, end = codec.decode(memoryview(data), 0)
    assert end == len(data), "decoder must consume exactly the encoded bytes"
    return value


BYTE_TABLE = [
    (t.INT8, -1, "ff"),
    (t.INT16, 258, "0102"),
    (t.INT32, -2, "fffffffe"),
    (t.INT64, 1, "0000000000000001"),
    (t.UINT16, 65535, "ffff"),
    (t.UINT32, 0xFFFFFFFF, "ffffffff"),
    (t.BOOLEAN, True, "01"),
    (t.BOOLEAN, False, "00"),
    (t.UUID, uuid.UUID(int=1), "00000000000000000000000000000001"),
    (t.VARINT, 0, "00"),
    (t.VARINT, -1, "01"),
    (t.VARINT, 1, "02"),
    (t.VARINT, 63, "7e"),
    (t.VARINT, -64, "7f"),
    (t.VARINT, 64, "8001"),
    (t.VARINT, 2**31 - 1, "feffffff0f"),
    (t.VARINT, -(2**31), "ffffffff0f"),
    (t.VARLONG, -(2**63), "ffffffffffffffffff01"),
    (t.UNSIGNED_VARINT, 300, "ac02"),
    (t.STRING, "", "0000"),
    (t.STRING, "kafka", "00056b61666b61"),
    (t.STRING, "é", "0002c3a9"),
    (t.NULLABLE_STRING, None, "ffff"),
    (t.COMPACT_STRING, "ab", "036162"),
    (t.COMPACT_STRING, "", "01"),
    (t.COMPACT_NULLABLE_STRING, None, "00"),
    (t.BYTES, b"\x00\x01", "000000020001"),
    (t.NULLABLE_BYTES, None, "ffffffff"),
    (t.COMPACT_BYTES, b"\xff", "02ff"),
    (t.COMPACT_NULLABLE_BYTES, None, "00"),
    (t.RECORDS, None, "ffffffff"),
    (t.RECORDS, b"abc", "00000003616263"),
    (t.COMPACT_RECORDS, b"abc", "04616263"),
    (t.array_codec(t.INT32), [1, 2], "000000020000000100000002"),
    (t.array_codec(t.INT32, nullable=True), None, "ffffffff"),
    (t.array_codec(t.STRING, compact=True), ["a"], "02000161"),
    (t.array_codec(t.COMPACT_STRING, compact=True, nullable=True), None, "00"),
]


@pytest.mark.parametrize(("codec", "value", "hex_bytes"), BYTE_TABLE, ids=lambda x: repr(x)[:30])
def test_primitive_encodes_to_its_documented_bytes(codec: t.Codec, value: object, hex_bytes: str) -> None:
    assert encode(codec, value).hex() == hex_bytes


@pytest.mark.parametrize(("codec", "value", "hex_bytes"), BYTE_TABLE, ids=lambda x: repr(x)[:30])
def test_primitive_decodes_from_its_documented_bytes(codec: t.Codec, value: object, hex_bytes: str) -> None:
    decoded = decode(codec, bytes.fromhex(hex_bytes))
    assert decoded == value


def test_records_decode_to_a_view_of_the_frame_without_copying() -> None:
    frame = bytes.fromhex("00000003616263")
    value = decode(t.RECORDS, frame)
    assert isinstance(value, memoryview)
    assert value.obj is frame


def test_boolean_reads_any_nonzero_byte_as_true() -> None:
    assert decode(t.BOOLEAN, b"\x07") is True


@pytest.mark.parametrize(
    ("codec", "hex_bytes"),
    [
        (t.INT32, "000000"),
        (t.INT64, ""),
        (t.BOOLEAN, ""),
        (t.UUID, "00" * 15),
        (t.STRING, "0005616263"),
        (t.STRING, "ffff"),  # null is not allowed in a non-nullable string
        (t.NULLABLE_STRING, "fffe"),  # -2 is never a valid length
        (t.STRING, "0002ffff"),  # not UTF-8
        (t.BYTES, "7fffffff00"),
        (t.NULLABLE_BYTES, "fffffffe"),
        (t.COMPACT_STRING, "00"),  # compact null in a non-nullable string
        (t.COMPACT_BYTES, "0a00"),
        (t.RECORDS, "0000000a00"),
        (t.VARINT, "ffffffffff01"),  # six bytes
        (t.VARINT, "ffffffff7f"),  # more than 32 bits
        (t.VARLONG, "ff" * 10 + "01"),
        (t.UNSIGNED_VARINT, "80"),
        (t.array_codec(t.INT32), "00000002000000010000"),
        (t.array_codec(t.INT32), "ffffffff"),  # null in a non-nullable array
        (t.array_codec(t.STRING), "fffffff0"),
    ],
)
def test_malformed_input_raises_protocol_decode_error(codec: t.Codec, hex_bytes: str) -> None:
    with pytest.raises(ProtocolDecodeError):
        codec.decode(memoryview(bytes.fromhex(hex_bytes)), 0)


def test_array_count_beyond_remaining_bytes_is_refused_before_reading_elements() -> None:
    calls = []

    def spy_decode(mv: memoryview, pos: int) -> tuple[int, int]:
        calls.append(pos)
        return 0, pos + 1

    spy = t.Codec("spy", t.INT8.encode, spy_decode, 1)
    data = bytes.fromhex("7fffffff") + b"\x00" * 16
    with pytest.raises(ProtocolDecodeError, match="overruns"):
        t.array_codec(spy).decode(memoryview(data), 0)
    assert calls == []


def test_compact_array_count_beyond_remaining_bytes_is_refused() -> None:
    data = bytes.fromhex("ffffffff0f")  # 2**32 - 2 elements declared, none present
    with pytest.raises(ProtocolDecodeError, match="overruns"):
        t.array_codec(t.INT64, compact=True).decode(memoryview(data), 0)


def test_tagged_fields_are_skipped_and_reported_with_their_payload_bounds() -> None:
    data = bytes.fromhex("02" + "00" + "02" + "abcd" + "05" + "01" + "ee") + b"rest"
    mv = memoryview(data)
    fields, end = t.decode_tagged_fields(mv, 0)
    assert [(tag, bytes(mv[start:stop])) for tag, start, stop in fields] == [(0, b"\xab\xcd"), (5, b"\xee")]
    assert t.skip_tagged_fields(mv, 0) == end == len(data) - 4


def test_tagged_fields_round_trip_through_their_encoder() -> None:
    buf = bytearray()
    t.encode_tagged_fields(buf, [(1, b"x"), (300, b"yz")])
    fields, end = t.decode_tagged_fields(memoryview(bytes(buf)), 0)
    assert end == len(buf)
    assert [(tag, stop - start) for tag, start, stop in fields] == [(1, 1), (300, 2)]


@pytest.mark.parametrize(
    "hex_bytes",
    [
        "0201000100",  # tags out of order
        "01000500",  # payload overruns
        "ff",  # truncated count
        "7f",  # 127 fields declared in zero bytes
    ],
)
def test_malformed_tagged_fields_raise_protocol_decode_error(hex_bytes: str) -> None:
    with pytest.raises(ProtocolDecodeError):
        t.skip_tagged_fields(memoryview(bytes.fromhex(hex_bytes)), 0)


def test_values_that_do_not_fit_raise_python_errors_for_the_schema_to_wrap() -> None:
    for codec, value in [(t.INT8, 128), (t.INT32, "1"), (t.STRING, None), (t.VARINT, 2**31), (t.STRING, "x" * 40000)]:
        with pytest.raises(t.ENCODE_FAILURES):
            encode(codec, value)


def test_parts_buffer_keeps_file_ranges_and_large_records_out_of_line() -> None:
    buf = t.PartsBuffer(inline_limit=8)
    buf += b"head"
    t.RECORDS.encode(buf, t.FileRangeRef(100, payload="segment-0"))
    buf += b"mid"
    big = b"z" * 8
    t.RECORDS.encode(buf, big)
    t.RECORDS.encode(buf, b"small")
    parts = buf.parts()
    assert parts[0] == b"head" + (100).to_bytes(4, "big")
    assert parts[1] == t.FileRangeRef(100, payload="segment-0")
    assert parts[2] == b"mid" + (8).to_bytes(4, "big")
    assert parts[3] is big
    assert parts[4] == (5).to_bytes(4, "big") + b"small"
    assert buf.deferred_size == 108


def test_file_range_records_into_a_plain_buffer_are_a_usage_error() -> None:
    with pytest.raises(ProtocolUsageError):
        t.RECORDS.encode(bytearray(), t.FileRangeRef(10))


@settings(max_examples=200)
@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trips_every_int32(value: int) -> None:
    assert decode(t.VARINT, encode(t.VARINT, value)) == value


@settings(max_examples=200)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_round_trips_every_int64(value: int) -> None:
    assert decode(t.VARLONG, encode(t.VARLONG, value)) == value


@settings(max_examples=100)
@given(st.text(max_size=50), st.booleans())
def test_strings_round_trip_in_both_encodings(value: str, compact: bool) -> None:
    codec = t.COMPACT_STRING if compact else t.STRING
    assert decode(codec, encode(codec, value)) == value


@settings(max_examples=100)
@given(st.binary(max_size=64))
def test_decoders_either_stay_inside_the_buffer_or_raise_protocol_decode_error(data: bytes) -> None:
    codecs = [
        t.INT64, t.VARINT, t.VARLONG, t.UNSIGNED_VARINT, t.UUID, t.STRING, t.NULLABLE_STRING,
        t.COMPACT_NULLABLE_STRING, t.BYTES, t.COMPACT_BYTES, t.RECORDS, t.COMPACT_RECORDS,
        t.array_codec(t.STRING), t.array_codec(t.INT32, compact=True, nullable=True),
    ]  # fmt: skip
    for codec in codecs:
        try:
            _, end = codec.decode(memoryview(data), 0)
        except ProtocolDecodeError:
            continue
        assert 0 < end <= len(data)
    try:
        end = t.skip_tagged_fields(memoryview(data), 0)
    except ProtocolDecodeError:
        return
    assert 0 < end <= len(data)
