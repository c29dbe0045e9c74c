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
"""

from __future__ import annotations

import struct
from typing import Sequence

from broker_core.storage.cleaner.record_scan import ScannedRecord
from spate.records.batch import CRC_OFFSET, HEADER_SIZE, LOG_OVERHEAD, NO_TIMESTAMP, BatchHeader, batch_crc
from spate.records.compression import Compression, codec_of, compress

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")


def rewrite_batch(header: BatchHeader, section: bytes, kept: Sequence[ScannedRecord]) -> bytes:
    """The batch of ``header`` holding only ``kept`` (records of ``section``, in order)."""
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
        header.attributes, header.last_offset_delta, header.base_timestamp, max_timestamp, header.producer_id,
        header.producer_epoch, header.base_sequence, len(kept),
    )  # fmt: skip
    _CRC.pack_into(out, CRC_OFFSET, batch_crc(out, 0, len(out)))
    return bytes(out)
