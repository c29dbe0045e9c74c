"""RecordBatch v2 header: parse, validate and stamp without touching records.

Byte layout (big-endian), as on the wire and on disk::

    0  baseOffset            int64
    8  batchLength           int32   bytes after this field
    12 partitionLeaderEpoch  int32
    16 magic                 int8    always 2
    17 crc                   uint32  CRC-32C of bytes 21..end
    21 attributes            int16
    23 lastOffsetDelta       int32
    27 baseTimestamp         int64
    35 maxTimestamp          int64
    43 producerId            int64
    51 producerEpoch         int16
    53 baseSequence          int32
    57 recordsCount          int32
    61 records ...

Because the CRC starts at ``attributes``, the broker can stamp ``baseOffset``
and ``partitionLeaderEpoch`` into a client's batch without recomputing it.
This module is the broker's hot path: nothing here decodes records.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from crc32c import crc32c

from spate.records.errors import CorruptRecordError

MAGIC_V2 = 2
LOG_OVERHEAD = 12  # baseOffset + batchLength
HEADER_SIZE = 61
CRC_START = 21
MAGIC_OFFSET = 16
CRC_OFFSET = 17
PARTITION_LEADER_EPOCH_OFFSET = 12
MAX_TIMESTAMP_OFFSET = 35
# batchLength counts everything after the length field, so a record-less batch
# (never valid, but the smallest header we can parse) is this long.
MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

_HEADER = struct.Struct(">qiibIhiqqqhii")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The fixed 61-byte prefix of a RecordBatch v2, plus where it was found."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    position: int = 0

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record; wraps at 2**31 like Kafka's."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (1 << 31)


def parse_header(buf: bytes | bytearray | memoryview, position: int = 0) -> BatchHeader:
    """Parse the header at ``position`` without validating length or CRC."""
    if len(buf) - position < HEADER_SIZE:
        raise CorruptRecordError(
            f"truncated batch header at position {position}: "
            f"{len(buf) - position} bytes, need {HEADER_SIZE}"
        )
    fields = _HEADER.unpack_from(buf, position)
    return BatchHeader(*fields, position=position)


def peek_offset_and_length(buf: bytes | bytearray | memoryview, position: int = 0) -> tuple[int, int]:
    """``(baseOffset, batchLength)`` of the batch at ``position``."""
    if len(buf) - position < LOG_OVERHEAD:
        raise CorruptRecordError(f"truncated batch at position {position}")
    return _OFFSET_AND_LENGTH.unpack_from(buf, position)


def validate_batch(
    buf: bytes | bytearray | memoryview,
    position: int = 0,
    *,
    check_crc: bool = True,
    max_size: int | None = None,
) -> BatchHeader:
    """Check one batch's framing, magic, counts and CRC; return its header.

    Raises ``CorruptRecordError`` naming the first problem found. Records are
    not decoded; the cost is one CRC pass over the batch bytes.
    """
    header = parse_header(buf, position)
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(
            f"batch at position {position} declares length {header.batch_length}, "
            f"less than the header's {MIN_BATCH_LENGTH}"
        )
    if max_size is not None and header.size > max_size:
        raise CorruptRecordError(
            f"batch at position {position} is {header.size} bytes, over the limit of {max_size}"
        )
    end = position + header.size
    if end > len(buf):
        raise CorruptRecordError(
            f"truncated batch at position {position}: declares {header.size} bytes, "
            f"{len(buf) - position} available"
        )
    if header.magic != MAGIC_V2:
        raise CorruptRecordError(f"batch at position {position} has magic {header.magic}, expected 2")
    if header.last_offset_delta < 0 or header.records_count < 0:
        raise CorruptRecordError(
            f"batch at position {position} has negative lastOffsetDelta or recordsCount"
        )
    if header.records_count > 0 and header.last_offset_delta < header.records_count - 1:
        raise CorruptRecordError(
            f"batch at position {position} holds {header.records_count} records "
            f"but spans only {header.last_offset_delta + 1} offsets"
        )
    if check_crc:
        actual = batch_crc(buf, position, end - position)
        if actual != header.crc:
            raise CorruptRecordError(
                f"batch at position {position} fails its CRC: stored {header.crc:#010x}, "
                f"computed {actual:#010x}"
            )
    return header


def iter_batches(
    buf: bytes | bytearray | memoryview,
    *,
    check_crc: bool = True,
    max_size: int | None = None,
) -> Iterator[BatchHeader]:
    """Validate and yield every batch of a buffer of consecutive batches.

    A buffer must end exactly at a batch boundary; trailing bytes raise.
    """
    position = 0
    total = len(buf)
    while position < total:
        header = validate_batch(buf, position, check_crc=check_crc, max_size=max_size)
        yield header
        position += header.size


def stamp_base_offset(buf: bytearray | memoryview, position: int, base_offset: int) -> None:
    """Overwrite baseOffset in place; the CRC does not cover it."""
    _INT64.pack_into(buf, position, base_offset)


def stamp_partition_leader_epoch(buf: bytearray | memoryview, position: int, epoch: int) -> None:
    """Overwrite partitionLeaderEpoch in place; the CRC does not cover it."""
    _INT32.pack_into(buf, position + PARTITION_LEADER_EPOCH_OFFSET, epoch)


def batch_crc(buf: bytes | bytearray | memoryview, position: int, size: int) -> int:
    """CRC-32C over the covered part of the batch at ``position``.

    Computed holding the GIL (about 50 µs per MB): released, the thread
    would wait up to the interpreter's switch interval (5 ms) to get it back
    from a busy thread, as a producer's sender does from the sending thread.
    """
    return crc32c(memoryview(buf)[position + CRC_START : position + size], 0, 0)
