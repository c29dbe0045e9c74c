"""Decode RecordBatch v2 bytes into records.

Every decode first validates the batch with ``validate_batch`` (framing,
magic, counts and CRC), then decompresses the records section within a size
limit and decodes exactly ``recordsCount`` records from it. Offset deltas must
strictly increase and stay within ``lastOffsetDelta``; bytes left over after
the last record are corrupt. Any problem raises ``CorruptRecordError``.

Offsets and timestamps come out absolute. In a LogAppendTime batch every
record's timestamp is the batch's maxTimestamp, whatever the records hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from spate.records.batch import HEADER_SIZE, BatchHeader, validate_batch
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression, codec_of, decompress
from spate.records.errors import CorruptRecordError
from spate.records.record import MIN_RECORD_BODY_SIZE, Header, Record, TimestampType, decode_record

Buffer = bytes | bytearray | memoryview

# A length varint plus the smallest body.
_MIN_RECORD_SIZE = 1 + MIN_RECORD_BODY_SIZE


@dataclass(frozen=True, slots=True)
class DecodedBatch:
    header: BatchHeader
    records: list[Record]

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType(int(self.header.is_log_append_time))


@dataclass(frozen=True, slots=True)
class RecordColumns:
    """One batch's records as parallel lists, for readers that build columns."""

    header: BatchHeader
    offsets: list[int]
    timestamps: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[tuple[Header, ...]]

    def __len__(self) -> int:
        return len(self.offsets)


def decode_batch_columns(
    buf: Buffer,
    position: int = 0,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    check_crc: bool = True,
) -> RecordColumns:
    """Validate and decode the batch at ``position`` into parallel lists.

    ``check_crc=False`` is for callers that already compared the CRC; the
    framing and record checks always run.
    """
    header = validate_batch(buf, position, check_crc=check_crc)
    data = records_section(buf, header, max_decompressed_size)
    count = header.records_count
    if count > len(data) // _MIN_RECORD_SIZE:
        raise CorruptRecordError(
            f"batch at position {position} declares {count} records "
            f"but its {len(data)}-byte records section cannot hold them"
        )
    offsets: list[int] = []
    timestamps: list[int] = []
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    headers: list[tuple[Header, ...]] = []
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    append_time = header.max_timestamp if header.is_log_append_time else None
    last_offset_delta = header.last_offset_delta
    end = len(data)
    pos = 0
    previous_delta = -1
    for index in range(count):
        if pos >= end:
            raise CorruptRecordError(f"batch at position {position} declares {count} records but holds {index}")
        offset_delta, timestamp_delta, key, value, record_headers, pos = decode_record(data, pos, end)
        if offset_delta <= previous_delta or offset_delta > last_offset_delta:
            raise CorruptRecordError(
                f"batch at position {position}: record {index} has offset delta {offset_delta} "
                f"after {previous_delta}, with lastOffsetDelta {last_offset_delta}"
            )
        previous_delta = offset_delta
        offsets.append(base_offset + offset_delta)
        timestamps.append(base_timestamp + timestamp_delta if append_time is None else append_time)
        keys.append(key)
        values.append(value)
        headers.append(record_headers)
    if pos != end:
        raise CorruptRecordError(
            f"batch at position {position} has {end - pos} bytes after its {count} records"
        )
    return RecordColumns(header, offsets, timestamps, keys, values, headers)


def decode_batch(
    buf: Buffer,
    position: int = 0,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> DecodedBatch:
    """Validate and decode the batch at ``position``."""
    columns = decode_batch_columns(buf, position, max_decompressed_size=max_decompressed_size)
    records = list(map(Record, columns.offsets, columns.timestamps, columns.keys, columns.values, columns.headers))
    return DecodedBatch(columns.header, records)


def iter_decoded_batches(
    buf: Buffer,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Iterator[DecodedBatch]:
    """Decode every batch of a buffer of consecutive batches.

    The buffer must end exactly at a batch boundary; a partial batch at the
    end raises once the batches before it have been yielded.
    """
    position = 0
    total = len(buf)
    while position < total:
        batch = decode_batch(buf, position, max_decompressed_size=max_decompressed_size)
        yield batch
        position += batch.header.size


def iter_records(
    buf: Buffer,
    *,
    include_control: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Iterator[Record]:
    """Every record of a buffer of consecutive batches, in order.

    Control records (transaction markers) are skipped unless
    ``include_control`` is set, as consumers never show them.
    """
    for batch in iter_decoded_batches(buf, max_decompressed_size=max_decompressed_size):
        if include_control or not batch.header.is_control:
            yield from batch.records


def records_section(buf: Buffer, header: BatchHeader, max_size: int) -> bytes:
    """The batch's records bytes, decompressed (at most ``max_size`` bytes)."""
    start = header.position + HEADER_SIZE
    end = header.position + header.size
    codec = codec_of(header.compression)
    section = memoryview(buf)[start:end]
    # An empty section carries no records whatever the codec bits say; the
    # record count check decides whether that is right.
    if codec is Compression.NONE or not section:
        return bytes(section)
    return decompress(codec, section, max_size)
