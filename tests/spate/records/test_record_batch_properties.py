"""Properties over random records and random damage.

Any records survive build → validate → decode with every codec; any bytes,
and any mutation of a valid batch (with or without a repaired CRC), either
decode or raise ``CorruptRecordError`` — never another exception.
"""

from __future__ import annotations

import struct

from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spate.records import (
    Compression,
    CorruptRecordError,
    Record,
    build_batch,
    decode_batch,
    decode_batch_columns,
    iter_records,
    validate_batch,
)

CODECS = st.sampled_from(list(Compression))
nullable_bytes = st.none() | st.binary(max_size=64)
headers = st.lists(st.tuples(st.text(max_size=12), nullable_bytes), max_size=3).map(tuple)
timestamps = st.integers(-1, 1 << 50)


@st.composite
def record_lists(draw, max_records: int = 20) -> tuple[int, list[Record]]:
    base_offset = draw(st.integers(0, 1 << 40))
    gaps = draw(st.lists(st.integers(1, 1000), min_size=1, max_size=max_records))
    records = []
    offset = base_offset + gaps[0] - 1
    for gap in gaps:
        if records:
            offset += gap
        records.append(
            Record(
                offset=offset,
                timestamp=draw(timestamps),
                key=draw(nullable_bytes),
                value=draw(nullable_bytes),
                headers=draw(headers),
            )
        )
    return base_offset, records


@settings(max_examples=150, deadline=None)
@given(record_lists(), CODECS)
def test_any_records_round_trip_with_any_codec(drawn, codec):
    base_offset, records = drawn
    batch = build_batch(records, base_offset=base_offset, compression=codec)
    header = validate_batch(batch)
    assert header.records_count == len(records)
    assert header.last_offset == records[-1].offset
    assert header.max_timestamp == max(r.timestamp for r in records)
    decoded = decode_batch(batch)
    assert decoded.records == records
    assert decode_batch_columns(batch).offsets == [r.offset for r in records]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(record_lists(max_records=5), CODECS), min_size=1, max_size=4))
def test_consecutive_batches_iterate_in_order(batches):
    buf = b"".join(build_batch(records, base_offset=base, compression=codec) for (base, records), codec in batches)
    expected = [record for (_, records), _ in batches for record in records]
    assert list(iter_records(buf)) == expected


def decodes_or_is_corrupt(buf) -> None:
    try:
        decode_batch(buf, max_decompressed_size=1 << 20)
    except CorruptRecordError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_decode_or_raise_corrupt_record_error(data):
    decodes_or_is_corrupt(data)


@st.composite
def valid_batches(draw) -> bytearray:
    base_offset, records = draw(record_lists(max_records=5))
    return bytearray(build_batch(records, base_offset=base_offset, compression=draw(CODECS)))


def repair_crc(batch: bytearray) -> None:
    """Give a damaged batch a matching CRC so decoding reaches its records."""
    if len(batch) >= 21:
        struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))


def repair_length(batch: bytearray) -> None:
    if len(batch) >= 12:
        struct.pack_into(">i", batch, 8, len(batch) - 12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_batches(), st.data())
def test_mutated_batches_decode_or_raise_corrupt_record_error(batch, data):
    kind = data.draw(st.sampled_from(["flip", "overwrite", "truncate", "insert", "delete"]))
    index = data.draw(st.integers(0, len(batch) - 1))
    if kind == "flip":
        batch[index] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "overwrite":
        batch[index : index + 4] = data.draw(st.binary(min_size=1, max_size=4))
    elif kind == "truncate":
        del batch[index:]
    elif kind == "insert":
        batch[index:index] = data.draw(st.binary(min_size=1, max_size=8))
    else:
        del batch[index : index + data.draw(st.integers(1, 8))]
    if data.draw(st.booleans()):
        repair_length(batch)
    if data.draw(st.booleans()):
        repair_crc(batch)
    decodes_or_is_corrupt(batch)


@settings(max_examples=200, deadline=None)
@given(valid_batches(), st.integers(61), st.binary(min_size=1, max_size=16))
def test_damage_inside_the_records_section_with_a_valid_crc_is_caught(batch, index, garbage):
    # Only the records section changes, and the CRC is made to match, so the
    # record decoder and the decompressors must be the ones to object.
    index = 61 + index % max(len(batch) - 61, 1)
    batch[index : index + len(garbage)] = garbage
    repair_length(batch)
    repair_crc(batch)
    decodes_or_is_corrupt(batch)
