"""Rewriting one record batch with some of its records removed.

The new batch keeps everything the old one said about itself: base offset,
lastOffsetDelta (so the producer's sequence range and the offsets after it
are unchanged), partition leader epoch, attributes (codec, timestamp type,
transactional, control), base timestamp, producer id, epoch and base
sequence. Kept records are copied byte for byte (their offset and timestamp
deltas stay valid, as base offset and base timestamp do not move); the
records section is compressed again with the batch's own codec. What changes
is the length, the record count, the CRC, and maxTimestamp (the largest
timestamp left; a LogAppendTime batch keeps its append time).

A batch left with no record keeps its header only (Kafka's empty batch), for
producer state: its producer id, epoch and sequence range survive cleaning.

The delete horizon (Kafka's KIP-534): when a batch keeps tombstones or a
spent transaction marker through its first cleaning, the cleaner stamps it
with the time after which those may go: attribute bit 6 is set and the base
timestamp field holds the horizon. Record timestamps are deltas from the base
timestamp, so the records are re-encoded with deltas from the horizon; every
record keeps its timestamp.
"""

from __future__ import annotations

import struct
from typing import Sequence

from broker_core.storage.cleaner.record_scan import ScannedRecord
from spate.records.batch import (
    CRC_OFFSET,
    DELETE_HORIZON_MASK,
    HEADER_SIZE,
    LOG_OVERHEAD,
    NO_TIMESTAMP,
    BatchHeader,
    batch_crc,
)
from spate.records.compression import Compression, codec_of, compress
from spate.records.record import decode_record, encode_record_into

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")


def has_delete_horizon(header: BatchHeader) -> bool:
    return bool(header.attributes & DELETE_HORIZON_MASK)


def rewrite_batch(
    header: BatchHeader, section: bytes, kept: Sequence[ScannedRecord], *, delete_horizon_ms: int | None = None
) -> bytes:
    """The batch of ``header`` holding only ``kept`` (records of ``section``, in order),
    stamped with ``delete_horizon_ms`` when given."""
    attributes, base_timestamp = header.attributes, header.base_timestamp
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_MASK
        base_timestamp = delete_horizon_ms
        records = _reencoded(header, section, kept, delete_horizon_ms)
    else:
        records = b"".join(section[record.start : record.end] for record in kept)
    codec = codec_of(header.compression)
    if records and codec is not Compression.NONE:
        records = compress(codec, records)
    if header.is_log_append_time:
        max_timestamp = header.max_timestamp
    else:
        max_timestamp = max((record.timestamp for record in kept), default=NO_TIMESTAMP)
    out = bytearray(HEADER_SIZE)
    out += records
    _HEADER.pack_into(
        out, 0, header.base_offset, len(out) - LOG_OVERHEAD, header.partition_leader_epoch, header.magic, 0,
        attributes, header.last_offset_delta, base_timestamp, max_timestamp, header.producer_id,
        header.producer_epoch, header.base_sequence, len(kept),
    )  # fmt: skip
    _CRC.pack_into(out, CRC_OFFSET, batch_crc(out, 0, len(out)))
    return bytes(out)


def _reencoded(header: BatchHeader, section: bytes, kept: Sequence[ScannedRecord], base_timestamp: int) -> bytes:
    """``kept`` encoded again with timestamp deltas from ``base_timestamp`` (their timestamps unchanged)."""
    out = bytearray()
    for record in kept:
        offset_delta, timestamp_delta, key, value, headers, _ = decode_record(section, record.start, record.end)
        timestamp = header.base_timestamp + timestamp_delta
        encode_record_into(out, offset_delta, timestamp - base_timestamp, key, value, headers)
    return bytes(out)
