"""Down-conversion: RecordBatch v2 from the log as the message sets of magic 0 and 1 old consumers fetch.

Follows Kafka's ``RecordsUtil.downConvert``: control batches dropped, one
wrapper per compressed batch, absolute offsets kept, headers dropped.
"""

from __future__ import annotations

import struct

import lz4.frame
import pytest

from spate.records import (
    MAGIC_V0,
    MAGIC_V1,
    Compression,
    ControlType,
    CorruptRecordError,
    Record,
    UnsupportedDownConversion,
    build_batch,
    build_control_batch,
    downconvert,
    read_message_set,
)
from spate.records.compression import XERIAL_MAGIC
from spate.records.legacy_compression import lz4_header_checksum_position, xxh32
from tests.spate.records.legacy_messages import (
    APPEND,
    APPEND_TIME,
    CREATE,
    LEGACY_CODECS,
    MAGICS,
    MAX_TIMESTAMP,
    RECORDS,
    as_tuples,
    entries,
    expected_tuples,
    flipped,
    inner_offsets,
    log_append_time_batch,
    message,
)

# --- downconvert ------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_downconvert_round_trips_through_read_message_set(codec, magic):
    legacy = downconvert(build_batch(RECORDS, base_offset=100, compression=codec), magic)
    messages = read_message_set(legacy)
    assert as_tuples(messages) == expected_tuples(magic)
    assert {(m.magic, m.compression, m.timestamp_type) for m in messages} == {(magic, codec, CREATE)}


@pytest.mark.parametrize("magic", MAGICS)
def test_an_uncompressed_batch_becomes_one_plain_message_per_record_at_its_offset(magic):
    legacy = downconvert(build_batch(RECORDS, base_offset=100), magic)
    assert entries(legacy) == [(offset, magic, 0) for offset in range(100, 105)]


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: c.name)
def test_a_compressed_batch_becomes_one_magic_1_wrapper_with_relative_inner_offsets(codec):
    gappy = [Record(r.offset + 3 * i, r.timestamp, r.key, r.value) for i, r in enumerate(RECORDS)]  # compacted
    legacy = downconvert(build_batch(gappy, base_offset=100, compression=codec), MAGIC_V1)
    assert entries(legacy) == [(gappy[-1].offset, MAGIC_V1, codec)]
    assert inner_offsets(legacy, codec) == [r.offset - 100 for r in gappy]
    assert [m.offset for m in read_message_set(legacy)] == [r.offset for r in gappy]
    (wrapper_timestamp,) = struct.unpack_from(">q", legacy, 18)
    assert wrapper_timestamp == MAX_TIMESTAMP


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: c.name)
def test_a_compressed_batch_becomes_one_magic_0_wrapper_with_absolute_inner_offsets(codec):
    legacy = downconvert(build_batch(RECORDS, base_offset=100, compression=codec), MAGIC_V0)
    assert entries(legacy) == [(104, MAGIC_V0, codec)]
    assert inner_offsets(legacy, codec) == [100, 101, 102, 103, 104]


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_log_append_time_survives_in_magic_1_with_the_batch_max_timestamp(codec):
    legacy = downconvert(log_append_time_batch(codec), MAGIC_V1)
    assert {attributes & 0x08 for _, _, attributes in entries(legacy)} == {0x08}
    messages = read_message_set(legacy)
    assert as_tuples(messages) == expected_tuples(MAGIC_V1, append_time=APPEND_TIME)
    assert {m.timestamp_type for m in messages} == {APPEND}


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_magic_0_carries_no_timestamps_even_for_log_append_time(codec):
    legacy = downconvert(log_append_time_batch(codec), MAGIC_V0)
    assert {attributes & 0x08 for _, _, attributes in entries(legacy)} == {0}
    assert as_tuples(read_message_set(legacy)) == expected_tuples(MAGIC_V0)


def test_magic_0_lz4_has_kafka_0_8_header_checksum_and_magic_1_the_correct_one():
    batch = build_batch(RECORDS, base_offset=100, compression=Compression.LZ4)
    for magic, covered_from in ((MAGIC_V0, 0), (MAGIC_V1, 4)):
        legacy = downconvert(batch, magic)
        frame = legacy[12 + (22 if magic else 14) :]
        position = lz4_header_checksum_position(frame)
        assert frame[position] == (xxh32(frame[covered_from:position]) >> 8) & 0xFF
    with pytest.raises(RuntimeError):  # why old Kafka's frames need the tolerant reader
        lz4.frame.decompress(downconvert(batch, MAGIC_V0)[26:])


def test_snappy_is_written_in_the_xerial_framing_of_the_java_producer():
    legacy = downconvert(build_batch(RECORDS, base_offset=100, compression=Compression.SNAPPY), MAGIC_V1)
    assert legacy[12 + 22 :].startswith(XERIAL_MAGIC + struct.pack(">ii", 1, 1))


def test_control_batches_are_dropped():
    marker = build_control_batch(ControlType.COMMIT, 7, 0, 3, timestamp=1, base_offset=99)
    transactional = build_batch(
        RECORDS, base_offset=100, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True
    )
    data = marker + transactional + build_control_batch(ControlType.ABORT, 7, 0, 3, timestamp=2, base_offset=105)
    assert [m.offset for m in read_message_set(downconvert(data, MAGIC_V1))] == [100, 101, 102, 103, 104]
    assert downconvert(marker, MAGIC_V0) == b""


def test_record_headers_are_dropped():
    assert RECORDS[0].headers
    legacy = downconvert(build_batch(RECORDS[:1], base_offset=100), MAGIC_V1)
    assert legacy == message(100, RECORDS[0].value, key=RECORDS[0].key, timestamp=RECORDS[0].timestamp)


def test_zstd_is_refused_when_it_comes_first():
    with pytest.raises(UnsupportedDownConversion, match="zstd"):
        downconvert(build_batch(RECORDS, base_offset=100, compression=Compression.ZSTD), MAGIC_V1)


def test_zstd_after_converted_batches_ends_the_output_before_it():
    data = build_batch(RECORDS[:2], base_offset=100) + build_batch(
        RECORDS[2:], base_offset=102, compression=Compression.ZSTD
    )
    assert [m.offset for m in read_message_set(downconvert(data, MAGIC_V0))] == [100, 101]


def test_only_magic_0_and_1_are_targets():
    with pytest.raises(ValueError, match="magic 2"):
        downconvert(build_batch(RECORDS, base_offset=100), 2)


def test_corrupt_batches_are_corrupt():
    batch = build_batch(RECORDS, base_offset=100)
    with pytest.raises(CorruptRecordError, match="CRC"):
        downconvert(flipped(batch, 100), MAGIC_V1)


def test_first_offset_trims_uncompressed_batches_but_not_compressed_ones():
    plain = build_batch(RECORDS, base_offset=100)
    gzip = build_batch(RECORDS, base_offset=100, compression=Compression.GZIP)
    assert [m.offset for m in read_message_set(downconvert(plain, MAGIC_V1, first_offset=103))] == [103, 104]
    assert [m.offset for m in read_message_set(downconvert(gzip, MAGIC_V1, first_offset=103))] == list(range(100, 105))
    assert downconvert(plain, MAGIC_V1, first_offset=105) == b""


class TestMaxBytes:
    BATCHES = [build_batch([r], base_offset=r.offset, compression=Compression.GZIP) for r in RECORDS]
    SIZES = [len(downconvert(b, MAGIC_V1)) for b in BATCHES]

    def convert(self, max_bytes):
        legacy = downconvert(b"".join(self.BATCHES), MAGIC_V1, max_bytes=max_bytes)
        return [m.offset for m in read_message_set(legacy)], len(legacy)

    def test_the_first_batch_goes_whole_even_past_the_limit(self):
        assert self.convert(1) == ([100], self.SIZES[0])

    def test_conversion_stops_before_the_batch_that_would_pass_the_limit(self):
        two = self.SIZES[0] + self.SIZES[1]
        assert self.convert(two + self.SIZES[2] - 1) == ([100, 101], two)

    def test_a_batch_that_fits_exactly_is_included(self):
        three = sum(self.SIZES[:3])
        assert self.convert(three) == ([100, 101, 102], three)

    def test_without_a_limit_every_batch_is_converted(self):
        assert self.convert(None) == ([100, 101, 102, 103, 104], sum(self.SIZES))

    def test_dropped_control_batches_do_not_count_as_the_first(self):
        marker = build_control_batch(ControlType.ABORT, 7, 0, 0, timestamp=1, base_offset=99)
        legacy = downconvert(marker + b"".join(self.BATCHES), MAGIC_V1, max_bytes=1)
        assert [m.offset for m in read_message_set(legacy)] == [100]
