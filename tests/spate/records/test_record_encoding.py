"""One record's bytes: the documented layout both ways, and every way it can be corrupt."""

from __future__ import annotations

import pytest

from spate.records.errors import CorruptRecordError
from spate.records.record import decode_record, encode_record_into

# length 14 | attributes 0 | timestampDelta 5 | offsetDelta 1 | key "k" |
# value null | 2 headers: "a" -> "b", "n" -> null
RECORD_WITH_HEADERS = bytes.fromhex("1c" "00" "0a" "02" "026b" "01" "04" "0261" "0262" "026e" "01")
# length 6 | attributes 0 | deltas 0 | null key | empty value | no headers
RECORD_WITH_NULL_KEY = bytes.fromhex("0c" "00" "00" "00" "01" "00" "00")


def encoded(offset_delta, timestamp_delta, key, value, headers=()):
    out = bytearray()
    encode_record_into(out, offset_delta, timestamp_delta, key, value, headers)
    return bytes(out)


def test_record_encodes_to_the_documented_bytes():
    assert encoded(1, 5, b"k", None, (("a", b"b"), ("n", None))) == RECORD_WITH_HEADERS
    assert encoded(0, 0, None, b"") == RECORD_WITH_NULL_KEY


def test_record_decodes_from_the_documented_bytes():
    assert decode_record(RECORD_WITH_HEADERS, 0) == (1, 5, b"k", None, (("a", b"b"), ("n", None)), 15)
    assert decode_record(RECORD_WITH_NULL_KEY, 0) == (0, 0, None, b"", (), 7)


def test_empty_and_null_are_distinct():
    _, _, key, value, _, _ = decode_record(encoded(0, 0, b"", None), 0)
    assert key == b"" and value is None


def test_header_keys_are_utf8():
    data = encoded(0, 0, None, None, (("clé", "välue".encode()),))
    assert decode_record(data, 0)[4] == (("clé", "välue".encode()),)


def test_records_decode_one_after_another():
    data = RECORD_WITH_HEADERS + RECORD_WITH_NULL_KEY
    first = decode_record(data, 0)
    second = decode_record(data, first[-1])
    assert second[-1] == len(data)


def test_large_fields_use_multi_byte_lengths():
    value = bytes(range(256)) * 40
    data = encoded(70_000, -(1 << 40), b"k" * 200, value, (("h" * 100, value),))
    assert decode_record(data, 0) == (70_000, -(1 << 40), b"k" * 200, value, (("h" * 100, value),), len(data))


def test_a_null_header_key_cannot_be_encoded():
    with pytest.raises(ValueError, match="header key"):
        encoded(0, 0, None, None, ((None, b"x"),))


def with_body(body_hex: str) -> bytes:
    """A record whose length prefix matches the given body."""
    body = bytes.fromhex(body_hex)
    return bytes([len(body) << 1]) + body


@pytest.mark.parametrize(
    "data, message",
    [
        (with_body("00" "00" "00" "03" "00" "00"), "negative key length -2"),
        (with_body("00" "00" "00" "01" "05" "00"), "negative value length -3"),
        (with_body("00" "00" "00" "01" "01" "01"), "impossible header count -1"),
        (with_body("00" "00" "00" "01" "01" "02" "01" "00"), "header key length -1"),
        (with_body("00" "00" "00" "01" "01" "02" "00" "03"), "negative header value length -2"),
        (with_body("00" "00" "00" "0a" "61" "01" "00"), "key runs past"),
        (with_body("00" "00" "00" "01" "0a" "61" "00"), "value runs past"),
        (with_body("00" "00" "00" "01" "01" "02" "0a" "61" "01"), "header key runs past"),
        (with_body("00" "00" "00" "01" "01" "02" "00" "0a" "61"), "header value runs past"),
        (with_body("00" "00" "00" "01" "01" "02" "02" "ff" "01"), "not UTF-8"),
        (with_body("00" "00" "00" "01" "01" "00" "00" "00"), "fields take 6 bytes"),
        (with_body("00" "00" "ffffffffff01" "01" "01" "00"), "varint overflow"),
        (with_body("00" "ffffffffffffffffffff01" "00" "01" "01" "00"), "varint overflow"),
        (with_body("00" "00" "00" "01" "01"), "declares length 5"),
        (bytes.fromhex("03"), "declares length -2"),
        (bytes.fromhex("20" "00000000"), "past the end"),
        (bytes.fromhex("80"), "truncated"),
        (b"", "truncated"),
    ],
    ids=[
        "negative-key-length",
        "negative-value-length",
        "negative-header-count",
        "null-header-key",
        "negative-header-value-length",
        "key-past-record",
        "value-past-record",
        "header-key-past-record",
        "header-value-past-record",
        "header-key-not-utf8",
        "bytes-left-in-record",
        "offset-delta-overflow",
        "timestamp-delta-overflow",
        "length-below-minimum",
        "negative-record-length",
        "record-past-section",
        "truncated-length",
        "empty",
    ],
)
def test_malformed_records_raise_corrupt_record_error(data, message):
    with pytest.raises(CorruptRecordError, match=message):
        decode_record(data, 0)


def test_a_field_may_not_borrow_bytes_from_the_next_record():
    # The first record's length says 6 but its key claims a byte of the second.
    data = with_body("00" "00" "00" "0a" "01" "00") + RECORD_WITH_NULL_KEY
    with pytest.raises(CorruptRecordError, match="key runs past"):
        decode_record(data, 0)
