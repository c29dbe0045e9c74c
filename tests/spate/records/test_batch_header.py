"""The batch-header layer: what the broker's produce path relies on."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from spate.records.batch import (
    CONTROL_MASK,
    HEADER_SIZE,
    TRANSACTIONAL_MASK,
    iter_batches,
    parse_header,
    stamp_base_offset,
    stamp_partition_leader_epoch,
    validate_batch,
)
from spate.records.errors import CorruptRecordError


def raw_batch(
    *,
    base_offset: int = 0,
    records_count: int = 1,
    last_offset_delta: int | None = None,
    attributes: int = 0,
    payload: bytes = b"\x00" * 10,
    magic: int = 2,
    producer_id: int = -1,
    base_sequence: int = -1,
) -> bytearray:
    """A header-valid batch whose records section is opaque bytes."""
    delta = records_count - 1 if last_offset_delta is None else last_offset_delta
    body = struct.pack(">hiqqqhii", attributes, delta, 1000, 2000, producer_id, 0, base_sequence, records_count) + payload
    crc = crc32c(body)
    length = 4 + 1 + 4 + len(body)
    return bytearray(struct.pack(">qiibI", base_offset, length, -1, magic, crc) + body)


def test_header_fields_are_read_from_their_documented_positions():
    buf = raw_batch(base_offset=42, records_count=3, attributes=TRANSACTIONAL_MASK | 4, producer_id=7, base_sequence=10)
    header = validate_batch(buf)
    assert header.base_offset == 42
    assert header.size == len(buf)
    assert header.magic == 2
    assert header.last_offset == 44
    assert header.next_offset == 45
    assert header.records_count == 3
    assert header.compression == 4
    assert header.is_transactional and not header.is_control
    assert header.base_timestamp == 1000 and header.max_timestamp == 2000
    assert header.producer_id == 7 and header.last_sequence == 12


def test_last_sequence_wraps_at_int32_max():
    buf = raw_batch(records_count=3, base_sequence=2**31 - 2, producer_id=1)
    assert validate_batch(buf).last_sequence == 0


def test_stamping_offset_and_epoch_keeps_the_crc_valid():
    buf = raw_batch(base_offset=0)
    stamp_base_offset(buf, 0, 1_000_000)
    stamp_partition_leader_epoch(buf, 0, 9)
    header = validate_batch(buf)
    assert header.base_offset == 1_000_000
    assert header.partition_leader_epoch == 9


def test_iter_batches_walks_consecutive_batches():
    buf = raw_batch(base_offset=0, records_count=2) + raw_batch(base_offset=2, attributes=CONTROL_MASK)
    headers = list(iter_batches(buf))
    assert [h.base_offset for h in headers] == [0, 2]
    assert headers[1].position == headers[0].size
    assert headers[1].is_control


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda b: b.__setitem__(16, 1), "magic 1"),
        (lambda b: b.__setitem__(len(b) - 1, b[-1] ^ 0xFF), "CRC"),
        (lambda b: b.__setitem__(slice(8, 12), struct.pack(">i", -5)), "declares length -5"),
        (lambda b: b.__setitem__(slice(8, 12), struct.pack(">i", 10_000)), "truncated"),
        (lambda b: b.__setitem__(slice(57, 61), struct.pack(">i", -1)), "negative"),
    ],
    ids=["wrong-magic", "bad-crc", "negative-length", "length-past-buffer", "negative-count"],
)
def test_malformed_headers_raise_corrupt_record_error(mutate, message):
    buf = raw_batch()
    mutate(buf)
    with pytest.raises(CorruptRecordError, match=message):
        validate_batch(buf)


def test_record_count_beyond_offset_span_is_corrupt():
    with pytest.raises(CorruptRecordError, match="spans only"):
        validate_batch(raw_batch(records_count=5, last_offset_delta=1))


@pytest.mark.parametrize("cut", [0, 1, 11, 12, HEADER_SIZE - 1, HEADER_SIZE, HEADER_SIZE + 5])
def test_every_truncation_is_reported_as_corrupt(cut):
    with pytest.raises(CorruptRecordError, match="truncated"):
        validate_batch(raw_batch()[:cut])


def test_size_limit_is_checked_before_the_crc_pass():
    buf = raw_batch(payload=b"x" * 1000)
    with pytest.raises(CorruptRecordError, match="over the limit"):
        validate_batch(buf, max_size=100)


def test_trailing_partial_batch_is_rejected():
    buf = raw_batch() + raw_batch()[:20]
    with pytest.raises(CorruptRecordError):
        list(iter_batches(buf))


def test_parse_header_needs_the_whole_fixed_prefix():
    with pytest.raises(CorruptRecordError):
        parse_header(b"\x00" * (HEADER_SIZE - 1))
