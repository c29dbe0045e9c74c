"""Rewriting a batch with records removed keeps what the batch says about itself (batch_rewrite.py)."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.batch_rewrite import has_delete_horizon, rewrite_batch
from broker_core.storage.cleaner.record_scan import batch_records_section, scan_records
from spate.records import Record, TimestampType, build_batch, decode_batch
from spate.records.batch import validate_batch
from spate.records.compression import Compression


def _batch(codec: Compression = Compression.NONE, **kwargs: object) -> bytes:
    records = [Record(100 + i, 5_000 + i, b"k%d" % i, None if i == 2 else b"v%d" % i) for i in range(4)]
    return build_batch(records, base_offset=100, compression=codec, producer_id=42, producer_epoch=3,
                       base_sequence=17, partition_leader_epoch=9, **kwargs)


def test_scan_finds_each_record_key_offset_and_tombstone():
    data = _batch()
    header = validate_batch(data)
    scanned = scan_records(batch_records_section(data, header), header)
    assert [(r.offset, r.key, r.is_tombstone, r.timestamp) for r in scanned] == [
        (100, b"k0", False, 5000), (101, b"k1", False, 5001), (102, b"k2", True, 5002), (103, b"k3", False, 5003),
    ]


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP, Compression.LZ4, Compression.ZSTD])
def test_a_filtered_batch_keeps_offsets_header_fields_and_codec_with_a_valid_crc(codec: Compression):
    data = _batch(codec)
    header = validate_batch(data)
    section = batch_records_section(data, header)
    scanned = scan_records(section, header)
    out = rewrite_batch(header, section, [scanned[1], scanned[3]])
    new = validate_batch(out)  # checks the CRC
    assert (new.base_offset, new.last_offset_delta, new.records_count) == (100, 3, 2)
    assert (new.producer_id, new.producer_epoch, new.base_sequence) == (42, 3, 17)
    assert (new.partition_leader_epoch, new.attributes, new.base_timestamp) == (9, header.attributes, 5000)
    assert new.max_timestamp == 5003
    batch = decode_batch(out)
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch.records] == [
        (101, b"k1", b"v1", 5001), (103, b"k3", b"v3", 5003),
    ]


def test_a_batch_left_without_records_keeps_its_header_for_producer_state():
    data = _batch(Compression.GZIP)
    header = validate_batch(data)
    out = rewrite_batch(header, batch_records_section(data, header), [])
    new = validate_batch(out)
    assert (new.records_count, new.base_offset, new.last_offset, new.base_sequence) == (0, 100, 103, 17)
    assert decode_batch(out).records == []


def test_a_log_append_time_batch_keeps_its_append_time():
    data = _batch(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=9_999)
    header = validate_batch(data)
    section = batch_records_section(data, header)
    out = rewrite_batch(header, section, scan_records(section, header)[:1])
    assert validate_batch(out).max_timestamp == 9_999


def test_a_delete_horizon_takes_the_base_timestamp_and_keeps_every_record_timestamp():
    data = _batch(Compression.LZ4)
    header = validate_batch(data)
    section = batch_records_section(data, header)
    out = rewrite_batch(header, section, scan_records(section, header), delete_horizon_ms=90_000)
    new = validate_batch(out)
    assert has_delete_horizon(new) and not has_delete_horizon(header)
    assert (new.base_timestamp, new.max_timestamp, new.compression) == (90_000, 5_003, header.compression)
    assert [(r.offset, r.timestamp, r.value) for r in decode_batch(out).records] == [
        (100, 5000, b"v0"), (101, 5001, b"v1"), (102, 5002, None), (103, 5003, b"v3"),
    ]


def test_a_batch_that_decompresses_far_beyond_its_size_is_still_read_whole():
    value = bytes(3 << 20)  # compresses to a few kilobytes
    data = build_batch([Record(0, 1, b"k", value)], compression=Compression.GZIP)
    header = validate_batch(data)
    assert [r.end - r.start > len(value) for r in scan_records(batch_records_section(data, header), header)] == [True]
