"""Building RecordBatch v2 bytes, and the broker's LogAppendTime rewrite."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from spate.records import (
    Compression,
    CorruptRecordError,
    Record,
    TimestampType,
    build_batch,
    decode_batch,
    set_log_append_time,
    validate_batch,
)

# One record (offset 5, timestamp 1000, key "k", value "v") in a batch with
# baseOffset 5, partitionLeaderEpoch 2, producer 7 / epoch 1 / sequence 3.
SMALL_BATCH_WITHOUT_CRC = bytes.fromhex(
    "0000000000000005"  # baseOffset
    "0000003a"  # batchLength: 49 header bytes after the length + 9 record bytes
    "00000002"  # partitionLeaderEpoch
    "02"  # magic
    "00000000"  # crc, checked separately
    "0000"  # attributes: no codec, CreateTime, not transactional, not control
    "00000000"  # lastOffsetDelta
    "00000000000003e8"  # baseTimestamp
    "00000000000003e8"  # maxTimestamp
    "0000000000000007"  # producerId
    "0001"  # producerEpoch
    "00000003"  # baseSequence
    "00000001"  # recordsCount
    "10" "00" "00" "00" "026b" "0276" "00"  # the record
)


def small_batch(**overrides) -> bytes:
    arguments = dict(
        base_offset=5, producer_id=7, producer_epoch=1, base_sequence=3, partition_leader_epoch=2
    )
    arguments.update(overrides)
    return build_batch([Record(offset=5, timestamp=1000, key=b"k", value=b"v")], **arguments)


def test_small_batch_has_the_documented_bytes():
    batch = small_batch()
    assert batch[:17] == SMALL_BATCH_WITHOUT_CRC[:17]
    assert batch[21:] == SMALL_BATCH_WITHOUT_CRC[21:]
    assert struct.unpack_from(">I", batch, 17)[0] == crc32c(SMALL_BATCH_WITHOUT_CRC[21:])


@pytest.mark.parametrize(
    "overrides, attributes",
    [
        (dict(compression=Compression.GZIP), 0x0001),
        (dict(compression=Compression.ZSTD), 0x0004),
        (dict(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=2000), 0x0008),
        (dict(is_transactional=True), 0x0010),
        (dict(is_transactional=True, is_control=True), 0x0030),
        (dict(compression=Compression.LZ4, is_transactional=True), 0x0013),
    ],
    ids=["gzip", "zstd", "log-append-time", "transactional", "control", "lz4-transactional"],
)
def test_attribute_bits_follow_the_arguments(overrides, attributes):
    batch = small_batch(**overrides)
    assert struct.unpack_from(">h", batch, 21)[0] == attributes
    validate_batch(batch)


def test_timestamps_are_relative_to_the_first_record_and_max_is_the_greatest():
    records = [
        Record(offset=0, timestamp=5000, key=None, value=b"a"),
        Record(offset=1, timestamp=9000, key=None, value=b"b"),
        Record(offset=2, timestamp=1000, key=None, value=b"c"),
    ]
    batch = build_batch(records)
    header = validate_batch(batch)
    assert header.base_timestamp == 5000
    assert header.max_timestamp == 9000
    assert [r.timestamp for r in decode_batch(batch).records] == [5000, 9000, 1000]


def test_offset_gaps_are_kept_and_last_offset_delta_is_the_last_records():
    records = [Record(offset=o, timestamp=0, key=None, value=None) for o in (100, 101, 105, 110)]
    batch = build_batch(records, base_offset=100)
    header = validate_batch(batch)
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (100, 10, 4)
    assert [r.offset for r in decode_batch(batch).records] == [100, 101, 105, 110]


def test_explicit_last_offset_delta_keeps_a_compacted_batch_span():
    records = [Record(offset=3, timestamp=0, key=b"k", value=b"v")]
    header = validate_batch(build_batch(records, last_offset_delta=9))
    assert header.next_offset == 10


def test_an_empty_batch_keeps_its_offset_span():
    batch = build_batch([], base_offset=40, last_offset_delta=4, producer_id=9, producer_epoch=0, base_sequence=0)
    decoded = decode_batch(batch)
    assert decoded.records == []
    assert decoded.header.next_offset == 45
    assert decoded.header.last_sequence == 4


def test_an_empty_batch_needs_its_span():
    with pytest.raises(ValueError, match="last_offset_delta"):
        build_batch([])


@pytest.mark.parametrize("offsets", [(0, 0), (2, 1)], ids=["repeated", "decreasing"])
def test_record_offsets_must_increase(offsets):
    records = [Record(offset=o, timestamp=0, key=None, value=None) for o in offsets]
    with pytest.raises(ValueError, match="does not increase"):
        build_batch(records)


def test_a_record_below_the_base_offset_is_refused():
    with pytest.raises(ValueError, match="does not increase"):
        build_batch([Record(offset=4, timestamp=0, key=None, value=None)], base_offset=5)


def test_last_offset_delta_below_the_records_is_refused():
    records = [Record(offset=o, timestamp=0, key=None, value=None) for o in (0, 1, 2)]
    with pytest.raises(ValueError, match="does not cover"):
        build_batch(records, last_offset_delta=1)


def test_log_append_time_is_required_exactly_for_log_append_time_batches():
    with pytest.raises(ValueError, match="log_append_time"):
        small_batch(timestamp_type=TimestampType.LOG_APPEND_TIME)
    with pytest.raises(ValueError, match="log_append_time"):
        small_batch(log_append_time=5)


def test_header_fields_out_of_range_are_refused():
    with pytest.raises(ValueError, match="out of range"):
        small_batch(producer_epoch=1 << 15)


def test_log_append_time_batch_reports_its_time_for_every_record():
    records = [Record(offset=i, timestamp=100 + i, key=None, value=b"x") for i in range(3)]
    batch = build_batch(records, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=7777)
    decoded = decode_batch(batch)
    assert decoded.header.max_timestamp == 7777
    assert decoded.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in decoded.records] == [7777] * 3


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_set_log_append_time_rewrites_type_max_timestamp_and_crc(codec):
    records = [Record(offset=i, timestamp=100 + i, key=b"k", value=b"v" * 50) for i in range(4)]
    batch = bytearray(build_batch(records, compression=codec))
    set_log_append_time(batch, 123_456)
    header = validate_batch(batch)
    assert header.is_log_append_time
    assert header.max_timestamp == 123_456
    assert header.base_timestamp == 100
    assert header.compression == codec
    assert [r.timestamp for r in decode_batch(batch).records] == [123_456] * 4


def test_set_log_append_time_works_on_a_batch_inside_a_larger_buffer():
    first = build_batch([Record(offset=0, timestamp=1, key=None, value=b"a")])
    second = build_batch([Record(offset=1, timestamp=2, key=None, value=b"b")], base_offset=1)
    buf = bytearray(first + second)
    set_log_append_time(buf, 99, len(first))
    assert validate_batch(buf, 0).max_timestamp == 1
    assert validate_batch(buf, len(first)).max_timestamp == 99


def test_set_log_append_time_never_gives_a_corrupt_batch_a_valid_crc():
    batch = bytearray(small_batch())
    batch[-2] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        set_log_append_time(batch, 5)


def test_build_returns_bytes_that_validate():
    batch = small_batch(compression=Compression.SNAPPY)
    assert isinstance(batch, bytes)
    assert validate_batch(batch).size == len(batch)
