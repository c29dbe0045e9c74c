"""Independent oracles for the legacy formats: the lz4 library for xxh32, kafka-python for message sets.

kafka-python writes and reads magic 0 and 1 message sets with every legacy
codec. For magic 0 LZ4 it needs the ``xxhash`` package, which is not
installed: those cases lend it Spate's ``xxh32``, which the first tests here
check against the checksums the lz4 library writes.
"""

from __future__ import annotations

import struct
import types
import warnings

import lz4.frame
import pytest

from spate.records import (
    MAGIC_V1,
    Compression,
    Record,
    build_batch,
    decode_batch,
    downconvert,
    read_message_set,
    upconvert,
)
from spate.records.legacy_compression import lz4_header_checksum_position, xxh32
from tests.spate.records.legacy_messages import (
    APPEND_TIME,
    LEGACY_CODECS,
    MAGICS,
    RECORDS,
    as_tuples,
    expected_tuples,
    log_append_time_batch,
)

with warnings.catch_warnings():
    # kafka-python's protocol package uses deprecated importlib APIs at import.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import codec as kafka_codec
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords


# --- xxh32 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "digest"), [(b"", 0x02CC5D05), (b"a", 0x550D7456), (b"abc", 0x32D153FF)], ids=["empty", "a", "abc"]
)
def test_xxh32_matches_the_reference_vectors(data, digest):
    assert xxh32(data) == digest


@pytest.mark.parametrize("size", [0, 3, 4, 15, 16, 17, 33, 1000])
def test_xxh32_matches_the_content_checksum_lz4_writes(size):
    data = (bytes(range(251)) * 5)[:size]
    frame = lz4.frame.compress(data, content_checksum=True)
    assert xxh32(data) == struct.unpack("<I", frame[-4:])[0]


@pytest.mark.parametrize("store_size", [False, True])
def test_xxh32_matches_the_header_checksum_lz4_writes(store_size):
    frame = lz4.frame.compress(b"abc" * 100, store_size=store_size)
    position = lz4_header_checksum_position(frame)
    assert frame[position] == (xxh32(frame[4:position]) >> 8) & 0xFF


# --- kafka-python as an independent oracle ----------------------------------------------------


@pytest.fixture
def kafka_python_lz4_for_magic_0(monkeypatch):
    """kafka-python's magic 0 LZ4 needs the xxhash package; lend it Spate's xxh32 in its shape."""
    if kafka_codec.xxhash is None:
        digest = lambda data: types.SimpleNamespace(digest=lambda: xxh32(data).to_bytes(4, "big"))  # noqa: E731
        monkeypatch.setattr(kafka_codec, "xxhash", types.SimpleNamespace(xxh32=digest))


def require_kafka_python_codec(codec):
    available = {Compression.SNAPPY: kafka_codec.has_snappy, Compression.LZ4: kafka_codec.has_lz4}
    if codec in available and not available[codec]():
        pytest.skip(f"kafka-python lacks the module for {codec.name.lower()}")


def kafka_python_message_set(magic, codec, records=RECORDS) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=int(codec), batch_size=1 << 20)
    for index, record in enumerate(records):
        builder.append(index, record.timestamp, record.key, record.value)
    return bytes(builder.build())


def kafka_python_reads(message_set: bytes) -> list[tuple]:
    reader = MemoryRecords(message_set)
    found = []
    while reader.has_next():
        batch = reader.next_batch()
        assert batch.validate_crc()
        found += [(r.offset, -1 if r.timestamp is None else r.timestamp, r.key, r.value) for r in batch]
    return found


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_spate_reads_and_upconverts_what_kafka_python_writes(codec, magic, kafka_python_lz4_for_magic_0):
    require_kafka_python_codec(codec)
    data = kafka_python_message_set(magic, codec)
    expected = [(i, ts, key, value) for i, (_, ts, key, value) in enumerate(expected_tuples(magic))]
    messages = read_message_set(data)
    assert as_tuples(messages) == expected
    assert {(m.magic, m.compression) for m in messages} == {(magic, codec)}
    decoded = decode_batch(upconvert(data))
    assert decoded.header.compression == codec
    assert [(r.offset, r.timestamp, r.key, r.value) for r in decoded.records] == expected


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_kafka_python_reads_what_downconvert_writes(codec, magic, kafka_python_lz4_for_magic_0):
    require_kafka_python_codec(codec)
    gappy = [Record(200 + 3 * i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(RECORDS)]
    data = build_batch(RECORDS, base_offset=100, compression=codec) + build_batch(
        gappy, base_offset=200, compression=codec
    )
    assert kafka_python_reads(downconvert(data, magic)) == expected_tuples(magic, RECORDS + gappy)


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_kafka_python_sees_log_append_time_in_down_converted_magic_1(codec):
    require_kafka_python_codec(codec)
    reader = MemoryRecords(downconvert(log_append_time_batch(codec), MAGIC_V1))
    seen = []
    while reader.has_next():
        seen += [(r.timestamp, r.timestamp_type) for r in reader.next_batch()]
    assert seen == [(APPEND_TIME, 1)] * len(RECORDS)
