"""kafka-python as an independent oracle: batches cross between the two exactly.

kafka-python needs extra modules for two codecs: ``python-snappy`` (imported
as ``snappy``) and ``zstandard``. Where one is missing, its cases are skipped
with a reason naming the package, so the gap shows in the test summary.
"""

from __future__ import annotations

import warnings

import pytest

from spate.records import (
    Compression,
    Record,
    TimestampType,
    build_batch,
    decode_batch,
    set_log_append_time,
    validate_batch,
)

with warnings.catch_warnings():
    # kafka-python's protocol package uses deprecated importlib APIs at import.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import codec as kafka_codec
    from kafka.record.default_records import (
        DefaultRecordBatch,
        DefaultRecordBatchBuilder,
    )
    from kafka.record.memory_records import MemoryRecords

MISSING_CODEC_MODULE = {
    Compression.SNAPPY: (kafka_codec.has_snappy, "python-snappy"),
    Compression.LZ4: (kafka_codec.has_lz4, "lz4"),
    Compression.ZSTD: (kafka_codec.has_zstd, "zstandard"),
}

# Values repeat so every codec shrinks them; kafka-python falls back to no
# compression when a codec would not help, which would hide the codec path.
RECORDS = [
    Record(offset=0, timestamp=1_700_000_000_000, key=b"key-0", value=b"value " * 40, headers=(("trace", b"abc"),)),
    Record(offset=1, timestamp=1_700_000_000_250, key=None, value=b"null key " * 30),
    Record(offset=2, timestamp=1_699_999_999_000, key=b"key-2", value=None, headers=(("a", None), ("b", b""))),
    Record(offset=3, timestamp=1_700_000_000_100, key=b"", value=b"", headers=(("unicode-ключ", b"\x00\xff"),)),
    Record(offset=4, timestamp=1_700_000_003_000, key=b"k" * 300, value=bytes(range(256)) * 8),
]


def require_kafka_python_codec(codec: Compression) -> None:
    if codec in MISSING_CODEC_MODULE:
        available, package = MISSING_CODEC_MODULE[codec]
        if not available():
            pytest.skip(f"kafka-python needs the '{package}' package for {codec.name.lower()}; it is not installed")


def kafka_python_batch(codec: Compression, records=RECORDS, *, producer=None) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=int(codec),
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    if producer is not None:
        builder.set_producer_state(*producer)
    for record in records:
        builder.append(record.offset, record.timestamp, record.key, record.value, list(record.headers))
    return bytes(builder.build())


def as_tuples(kafka_records) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in kafka_records]


def spate_tuples(records) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_spate_decodes_kafka_python_batches_exactly(codec):
    require_kafka_python_codec(codec)
    decoded = decode_batch(kafka_python_batch(codec))
    assert decoded.header.compression == codec
    assert decoded.records == RECORDS
    assert decoded.header.base_timestamp == RECORDS[0].timestamp
    assert decoded.header.max_timestamp == max(r.timestamp for r in RECORDS)
    assert decoded.header.last_offset_delta == 4


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_spate_reads_kafka_python_producer_state(codec):
    require_kafka_python_codec(codec)
    header = decode_batch(kafka_python_batch(codec, producer=(77, 2, 10, True))).header
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (77, 2, 10)
    assert header.is_transactional
    assert header.last_sequence == 14


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_kafka_python_decodes_spate_batches_exactly(codec):
    require_kafka_python_codec(codec)
    batch = DefaultRecordBatch(build_batch(RECORDS, base_offset=0, compression=codec))
    assert batch.validate_crc()
    assert batch.compression_type == codec
    assert (batch.base_offset, batch.last_offset_delta, batch.records_count) == (0, 4, 5)
    assert batch.max_timestamp == max(r.timestamp for r in RECORDS)
    assert as_tuples(batch) == spate_tuples(RECORDS)


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_kafka_python_walks_consecutive_spate_batches_with_offset_gaps(codec):
    require_kafka_python_codec(codec)
    later = [
        Record(offset=1000 + 3 * i, timestamp=r.timestamp, key=r.key, value=r.value, headers=r.headers)
        for i, r in enumerate(RECORDS)
    ]
    buf = build_batch(RECORDS, compression=codec) + build_batch(
        later, base_offset=1000, compression=codec, producer_id=5, producer_epoch=1, base_sequence=0
    )
    batches = list(MemoryRecords(buf))
    assert all(b.validate_crc() for b in batches)
    assert batches[1].producer_id == 5 and batches[1].last_offset == 1012
    assert [t for b in batches for t in as_tuples(b)] == spate_tuples(RECORDS + later)


@pytest.mark.parametrize("codec", list(Compression), ids=lambda c: c.name)
def test_kafka_python_sees_log_append_time_set_by_the_broker(codec):
    require_kafka_python_codec(codec)
    buf = bytearray(build_batch(RECORDS, compression=codec))
    set_log_append_time(buf, 1_800_000_000_000)
    batch = DefaultRecordBatch(bytes(buf))
    assert batch.validate_crc()
    assert batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in batch] == [1_800_000_000_000] * len(RECORDS)


def test_stamping_offset_and_epoch_into_a_kafka_python_batch_keeps_it_valid():
    from spate.records import stamp_base_offset, stamp_partition_leader_epoch

    buf = bytearray(kafka_python_batch(Compression.GZIP))
    stamp_base_offset(buf, 0, 5_000)
    stamp_partition_leader_epoch(buf, 0, 3)
    assert validate_batch(buf).base_offset == 5_000
    assert [r.offset for r in decode_batch(buf).records] == [5_000 + r.offset for r in RECORDS]
