"""Zig-zag varints: byte tables both ways, strict bounds on read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.records.errors import CorruptRecordError
from spate.records.varint import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
)

VARINT_TABLE = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (300, "d804"),
    (8191, "fe7f"),
    (8192, "808001"),
    (INT32_MAX, "feffffff0f"),
    (INT32_MIN, "ffffffff0f"),
]

VARLONG_TABLE = VARINT_TABLE + [
    (1 << 31, "8080808010"),
    (-(1 << 31) - 1, "8180808010"),
    (1_700_000_000_000, "80a0abfef962"),
    (INT64_MAX, "feffffffffffffffff01"),
    (INT64_MIN, "ffffffffffffffffff01"),
]


@pytest.mark.parametrize("value, encoded", VARINT_TABLE)
def test_varint_encodes_to_the_documented_bytes(value, encoded):
    assert encode_varint(value).hex() == encoded
    assert size_of_varint(value) == len(encoded) // 2


@pytest.mark.parametrize("value, encoded", VARINT_TABLE)
def test_varint_decodes_from_the_documented_bytes(value, encoded):
    assert decode_varint(bytes.fromhex(encoded)) == (value, len(encoded) // 2)


@pytest.mark.parametrize("value, encoded", VARLONG_TABLE)
def test_varlong_encodes_to_the_documented_bytes(value, encoded):
    assert encode_varlong(value).hex() == encoded
    assert size_of_varlong(value) == len(encoded) // 2


@pytest.mark.parametrize("value, encoded", VARLONG_TABLE)
def test_varlong_decodes_from_the_documented_bytes(value, encoded):
    assert decode_varlong(bytes.fromhex(encoded)) == (value, len(encoded) // 2)


def test_decoding_starts_at_position_and_returns_the_next_one():
    buf = bytes.fromhex("ff" "d804" "01")
    value, position = decode_varint(buf, 1)
    assert (value, position) == (300, 3)
    assert decode_varint(buf, position) == (-1, 4)


@pytest.mark.parametrize(
    "encoded",
    ["ffffffff10", "ffffffff8f", "ffffffffff01", "8080808080808000"],
    ids=["fifth-byte-too-wide", "fifth-byte-continues", "six-bytes", "eight-bytes"],
)
def test_varint_longer_than_five_bytes_or_32_bits_overflows(encoded):
    with pytest.raises(CorruptRecordError, match="varint overflow"):
        decode_varint(bytes.fromhex(encoded))


@pytest.mark.parametrize(
    "encoded",
    ["ffffffffffffffffff02", "ffffffffffffffffff81", "ffffffffffffffffffff01"],
    ids=["tenth-byte-too-wide", "tenth-byte-continues", "eleven-bytes"],
)
def test_varlong_longer_than_ten_bytes_or_64_bits_overflows(encoded):
    with pytest.raises(CorruptRecordError, match="varint overflow"):
        decode_varlong(bytes.fromhex(encoded))


@pytest.mark.parametrize("encoded", ["", "80", "ffff", "ffffffff"])
def test_varint_cut_short_is_truncated(encoded):
    with pytest.raises(CorruptRecordError, match="truncated"):
        decode_varint(bytes.fromhex(encoded))


def test_end_bounds_a_read_inside_a_larger_buffer():
    buf = bytes.fromhex("d804")
    with pytest.raises(CorruptRecordError, match="truncated"):
        decode_varint(buf, 0, end=1)


@pytest.mark.parametrize("value", [INT32_MAX + 1, INT32_MIN - 1])
def test_encoding_a_value_outside_int32_is_a_caller_error(value):
    with pytest.raises(ValueError, match="int32"):
        encode_varint(value)


@pytest.mark.parametrize("value", [INT64_MAX + 1, INT64_MIN - 1])
def test_encoding_a_value_outside_int64_is_a_caller_error(value):
    with pytest.raises(ValueError, match="int64"):
        encode_varlong(value)


@settings(max_examples=200)
@given(st.integers(INT32_MIN, INT32_MAX))
def test_every_int32_round_trips_through_a_varint(value):
    encoded = encode_varint(value)
    assert len(encoded) <= 5
    assert decode_varint(encoded) == (value, len(encoded))


@settings(max_examples=200)
@given(st.integers(INT64_MIN, INT64_MAX))
def test_every_int64_round_trips_through_a_varlong(value):
    encoded = encode_varlong(value)
    assert len(encoded) <= 10
    assert decode_varlong(encoded) == (value, len(encoded))


@settings(max_examples=200)
@given(st.binary(max_size=12))
def test_any_bytes_decode_to_a_varint_or_raise_corrupt_record_error(data):
    try:
        value, position = decode_varint(data)
    except CorruptRecordError:
        return
    assert INT32_MIN <= value <= INT32_MAX
    assert 1 <= position <= 5
