"""Scanning a batch's records for compaction (record_scan.py): the cleaner's full scan and the planner's
key scan agree on every record, whatever the width of its varints."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.record_scan import batch_records_section, scan_keys, scan_records
from spate.records import Record, build_batch
from spate.records.batch import validate_batch
from spate.records.compression import Compression
from spate.records.errors import CorruptRecordError


def wide_batch(codec: Compression = Compression.NONE) -> bytes:
    """Records whose lengths, timestamp and offset deltas and key sizes take one to four varint bytes."""
    records = []
    for i, offset_delta in enumerate([0, 1, 63, 64, 200, 9_000, 70_000]):
        key = None if i == 3 else b"k" * (5 if i % 2 else 70) + bytes([i])
        value = None if i == 4 else b"v" * (10 if i % 2 else 9_000)
        records.append(Record(1_000 + offset_delta, 1_700_000_000_000 + i * 5_000_000, key, value))
    return build_batch(records, base_offset=1_000, compression=codec)


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.LZ4])
def test_both_scans_find_every_record_at_its_offset(codec: Compression):
    data = wide_batch(codec)
    header = validate_batch(data)
    section = batch_records_section(data, header)
    records = scan_records(section, header)
    assert [r.offset for r in records] == [1_000, 1_001, 1_063, 1_064, 1_200, 10_000, 71_000]
    assert [r.timestamp for r in records] == [1_700_000_000_000 + i * 5_000_000 for i in range(7)]
    assert [r.is_tombstone for r in records] == [False] * 4 + [True, False, False]
    assert records[3].key is None and records[6].key == b"k" * 70 + b"\x06"
    latest: dict[bytes, int] = {}
    scan_keys(section, header, latest, from_offset=0)
    assert latest == {r.key: r.offset for r in records if r.key is not None}


def test_the_key_scan_skips_records_before_the_dirty_range():
    data = wide_batch()
    header = validate_batch(data)
    latest: dict[bytes, int] = {}
    scan_keys(batch_records_section(data, header), header, latest, from_offset=1_200)
    assert sorted(latest.values()) == [1_200, 10_000, 71_000]


def test_a_record_cut_short_is_corrupt_for_both_scans():
    data = wide_batch()
    header = validate_batch(data)
    section = batch_records_section(data, header)[:-20]
    with pytest.raises(CorruptRecordError):
        scan_records(section, header)
    with pytest.raises(CorruptRecordError):
        scan_keys(section, header, {}, from_offset=0)
