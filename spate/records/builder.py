"""Build RecordBatch v2 bytes from records, and stamp LogAppendTime.

``build_batch`` writes the layout documented in ``batch.py``: records are
encoded (``record.py``) with offsets relative to ``base_offset`` and
timestamps relative to the first record's, the records section is compressed
as a whole, and the CRC-32C over ``attributes``..end is filled in last.
"""

from __future__ import annotations

import struct
from typing import Sequence

from spate.records.batch import (
    CONTROL_MASK,
    CRC_OFFSET,
    CRC_START,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    MAX_TIMESTAMP_OFFSET,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    batch_crc,
    validate_batch,
)
from spate.records.compression import Compression, compress
from spate.records.record import Record, TimestampType, encode_record_into
from spate.records.varint import INT32_MAX

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMP = struct.Struct(">q")
_ATTRIBUTES_OFFSET = CRC_START


def build_batch(
    records: Sequence[Record],
    *,
    base_offset: int = 0,
    compression: Compression | int = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    log_append_time: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """Encode ``records`` as one RecordBatch v2.

    Each record's ``offset`` is absolute: its offsetDelta is
    ``record.offset - base_offset``, and offsets must strictly increase.
    baseTimestamp is the first record's timestamp; maxTimestamp is the
    greatest record timestamp, or ``log_append_time`` for a LogAppendTime
    batch (which requires it). ``last_offset_delta`` defaults to the last
    record's delta; a larger one keeps the offset span of a batch whose
    records were removed by compaction, and is the only way to build a batch
    with no records. Bad arguments raise ``ValueError``.
    """
    codec = Compression(compression)
    if (timestamp_type == TimestampType.LOG_APPEND_TIME) != (log_append_time is not None):
        raise ValueError("log_append_time is required for, and only for, LogAppendTime batches")
    if not records and last_offset_delta is None:
        raise ValueError("an empty batch needs an explicit last_offset_delta")

    out = bytearray(HEADER_SIZE)
    # Uncompressed records go straight into the batch buffer; compressed ones
    # are gathered apart and compressed as one block.
    section = out if codec is Compression.NONE else bytearray()
    base_timestamp = records[0].timestamp if records else NO_TIMESTAMP
    previous_delta, max_timestamp = _encode_records(section, records, base_offset, base_timestamp)
    if last_offset_delta is None:
        last_offset_delta = previous_delta
    elif last_offset_delta < max(previous_delta, 0) or last_offset_delta > INT32_MAX:
        raise ValueError(f"last_offset_delta {last_offset_delta} does not cover the records")
    if codec is not Compression.NONE:
        out += compress(codec, section)

    attributes = int(codec)
    if log_append_time is not None:
        attributes |= TIMESTAMP_TYPE_MASK
        max_timestamp = log_append_time
    attributes |= (TRANSACTIONAL_MASK if is_transactional else 0) | (CONTROL_MASK if is_control else 0)
    try:
        # The CRC field (0 here) is filled in below, once the whole batch is written.
        _HEADER.pack_into(
            out, 0, base_offset, len(out) - LOG_OVERHEAD, partition_leader_epoch, MAGIC_V2, 0, attributes,
            last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, len(records),
        )  # fmt: skip
    except struct.error as exc:
        raise ValueError(f"a batch header field is out of range: {exc}") from exc
    _CRC.pack_into(out, CRC_OFFSET, batch_crc(out, 0, len(out)))
    return bytes(out)


def _encode_records(
    section: bytearray, records: Sequence[Record], base_offset: int, base_timestamp: int
) -> tuple[int, int]:
    """Append each record's encoding to ``section``; return the last offset delta and the greatest timestamp."""
    max_timestamp = base_timestamp
    previous_delta = -1
    for record in records:
        offset_delta = record.offset - base_offset
        if offset_delta <= previous_delta:
            raise ValueError(
                f"record offset {record.offset} does not increase past "
                f"{base_offset + previous_delta} (base offset {base_offset})"
            )
        previous_delta = offset_delta
        timestamp = record.timestamp
        if timestamp > max_timestamp:
            max_timestamp = timestamp
        encode_record_into(section, offset_delta, timestamp - base_timestamp, record.key, record.value, record.headers)
    return previous_delta, max_timestamp


def set_log_append_time(batch: bytearray, timestamp: int, position: int = 0, *, check_crc: bool = True) -> None:
    """Mark the batch at ``position`` as LogAppendTime with ``timestamp``, in place.

    Sets attribute bit 3, writes maxTimestamp and recomputes the CRC, the one
    rewrite the broker makes that the CRC covers. The batch is validated
    first (CRC included unless ``check_crc`` is false, for a caller that has
    just validated it) so a corrupt batch is never given a fresh valid CRC.
    Records are not touched: readers take every record's timestamp from
    maxTimestamp in a LogAppendTime batch.
    """
    header = validate_batch(batch, position, check_crc=check_crc)
    attributes = header.attributes | TIMESTAMP_TYPE_MASK
    _ATTRIBUTES.pack_into(batch, position + _ATTRIBUTES_OFFSET, attributes)
    _TIMESTAMP.pack_into(batch, position + MAX_TIMESTAMP_OFFSET, timestamp)
    _CRC.pack_into(batch, position + CRC_OFFSET, batch_crc(batch, position, header.size))
