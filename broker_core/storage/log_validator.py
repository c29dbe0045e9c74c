"""Validate an append and stage it: the checks and stamping before any write.

Validation never decodes records. It checks every batch's framing and CRC
(the one CRC pass an append makes), the topic's size limit, offset order and,
for a client's append, that no batch is a control batch or claims
LogAppendTime (only the broker sets it); then it stamps a private copy:

* ``baseOffset`` and ``partitionLeaderEpoch`` when the log assigns offsets
  (neither is covered by the CRC, so the CRC stays valid);
* for ``message.timestamp.type=LogAppendTime``, the timestamp-type attribute
  bit and ``maxTimestamp``, which are covered, so the CRC is recomputed.

The one exception: a client's batch (``allow_control=False``) for a compacted topic is decoded to check
that every record has a key (compaction keeps the last record per key, so a
keyless one could never be compacted); the keyless records are named by their
index in their batch, as Kafka answers them in Produce v8+.

Nothing touches the log until the whole append validated, so a bad batch
anywhere rejects the append as a whole. The headers returned are the ones
later steps (producer state, the indexes) work from, so no batch header is
parsed twice.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from broker_core.storage.config import LONG_MAX, LogConfig
from broker_core.storage.errors import (
    ControlBatchFromClientError,
    InvalidAppendError,
    InvalidRecordsError,
    InvalidTimestampError,
    RecordTooLargeError,
)
from spate.records.batch import (
    CRC_OFFSET,
    CRC_START,
    LOG_OVERHEAD,
    MAX_TIMESTAMP_OFFSET,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    batch_crc,
    peek_offset_and_length,
    stamp_base_offset,
    stamp_partition_leader_epoch,
    validate_batch,
)
from spate.records.reader import decode_batch_columns

_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")


@dataclass(frozen=True, slots=True)
class AppendInfo:
    """What an append wrote.

    ``batches`` are the headers as stamped, with positions relative to the
    start of the appended bytes. ``log_append_time`` is the broker time
    stamped into the batches, or -1 for CreateTime topics.
    """

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    batch_count: int
    size_in_bytes: int
    log_append_time: int
    batches: tuple[BatchHeader, ...]


@dataclass(frozen=True, slots=True)
class ValidatedAppend:
    """A checked and stamped append, ready to be written as one block."""

    data: bytearray
    headers: tuple[BatchHeader, ...]
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int

    @property
    def first_offset(self) -> int:
        return self.headers[0].base_offset

    @property
    def last_offset(self) -> int:
        return self.headers[-1].last_offset

    def info(self) -> AppendInfo:
        return AppendInfo(
            first_offset=self.first_offset,
            last_offset=self.last_offset,
            max_timestamp=self.max_timestamp,
            offset_of_max_timestamp=self.offset_of_max_timestamp,
            batch_count=len(self.headers),
            size_in_bytes=len(self.data),
            log_append_time=self.log_append_time,
            batches=self.headers,
        )


def validate_append(
    records: bytes | bytearray | memoryview,
    config: LogConfig,
    *,
    next_offset: int,
    assign_offsets: bool,
    leader_epoch: int = -1,
    now_ms: int,
    allow_control: bool = True,
) -> ValidatedAppend:
    """Check ``records`` (whole v2 batches) for a log ending at ``next_offset``; return a stamped copy.

    With ``assign_offsets`` (a leader's append) the batches get consecutive
    offsets from ``next_offset`` and ``leader_epoch`` as their
    partitionLeaderEpoch, and each must be dense (``recordsCount ==
    lastOffsetDelta + 1``, at least one record) as a producer's batches are;
    on a LogAppendTime topic ``now_ms`` becomes every batch's timestamp.
    Without it (replication) they keep offsets, epochs and timestamps, and
    the offsets must start at or above ``next_offset`` and strictly increase.
    With ``allow_control=False`` (a client's produce request) a control batch
    is refused: only the broker writes transaction markers.

    Raises ``CorruptRecordError`` for malformed bytes, ``RecordTooLargeError``
    for a batch over ``max.message.bytes``, ``ControlBatchFromClientError``
    and ``InvalidAppendError`` for the rest.
    """
    if len(records) == 0:
        raise InvalidAppendError("an append must carry at least one batch")
    data = bytearray(records)
    stamp_time = now_ms if assign_offsets and config.log_append_time else None
    headers: list[BatchHeader] = []
    max_timestamp = NO_TIMESTAMP
    offset_of_max = -1
    expected = next_offset
    position = 0
    while position < len(data):
        header = _checked_batch(data, position, config.max_message_bytes, allow_control)
        if not allow_control and config.compact_enabled:  # a client's batch for a compacted topic
            _check_keys(data, position)
        if not allow_control and not config.log_append_time:
            _check_timestamps(data, header, now_ms, config)
        if assign_offsets:
            header = _assign(data, header, expected, leader_epoch, stamp_time)
        elif header.base_offset < expected:
            raise InvalidAppendError(
                f"batch at position {position} starts at offset {header.base_offset}, "
                f"below the expected next offset {expected}"
            )
        if header.max_timestamp > max_timestamp:
            max_timestamp = header.max_timestamp
            offset_of_max = header.base_offset
        headers.append(header)
        expected = header.next_offset
        position += header.size
    return ValidatedAppend(
        data=data,
        headers=tuple(headers),
        max_timestamp=max_timestamp,
        offset_of_max_timestamp=offset_of_max,
        log_append_time=stamp_time if stamp_time is not None else NO_TIMESTAMP,
    )


def _checked_batch(data: bytearray, position: int, max_message_bytes: int, allow_control: bool) -> BatchHeader:
    """The header of the batch at ``position`` once its size, framing, CRC and kind passed."""
    _, length = peek_offset_and_length(data, position)
    if length + LOG_OVERHEAD > max_message_bytes:
        raise RecordTooLargeError(length + LOG_OVERHEAD, max_message_bytes, position)
    header = validate_batch(data, position, check_crc=True)
    if header.is_control and not allow_control:
        raise ControlBatchFromClientError(
            f"batch at position {position} is a control batch; clients may not write markers"
        )
    if header.is_log_append_time and not allow_control:
        raise InvalidTimestampError(
            f"batch at position {position} has the LogAppendTime timestamp type, which producers may not set"
        )
    return header


def _check_timestamps(data: bytearray, header: BatchHeader, now_ms: int, config: LogConfig) -> None:
    """Refuse a client's batch holding a CreateTime timestamp too far before or after ``now_ms``.

    The header's maximum settles the future side; the past side needs the
    records' own timestamps only when the first one passes and a limit is set.
    Records without a timestamp (-1) are not checked, as in Kafka.
    """
    after, before = config.timestamp_after_max_ms, config.timestamp_before_max_ms
    if header.max_timestamp != NO_TIMESTAMP and header.max_timestamp - now_ms > after:
        raise InvalidTimestampError(
            f"batch at position {header.position}: timestamp {header.max_timestamp} is more than "
            f"message.timestamp.after.max.ms ({after} ms) ahead of the broker's clock ({now_ms})"
        )
    if before == LONG_MAX:
        return
    oldest = header.base_timestamp
    if oldest == NO_TIMESTAMP or now_ms - oldest <= before:
        stamped = [t for t in decode_batch_columns(data, header.position).timestamps if t != NO_TIMESTAMP]
        oldest = min(stamped, default=NO_TIMESTAMP)
    if oldest != NO_TIMESTAMP and now_ms - oldest > before:
        raise InvalidTimestampError(
            f"batch at position {header.position}: timestamp {oldest} is more than "
            f"message.timestamp.before.max.ms ({before} ms) behind the broker's clock ({now_ms})"
        )


COMPACTED_WITHOUT_KEY = "Compacted topic cannot accept message without key."


def _check_keys(data: bytearray, position: int) -> None:
    """Refuse the batch at ``position`` if any of its records lacks a key (a compacted topic's rule)."""
    keys = decode_batch_columns(data, position).keys
    keyless = tuple((index, COMPACTED_WITHOUT_KEY) for index, key in enumerate(keys) if key is None)
    if keyless:
        raise InvalidRecordsError(
            f"batch at position {position}: {len(keyless)} of its {len(keys)} records have no key, "
            "which a compacted topic refuses",
            keyless,
        )


def _assign(
    data: bytearray, header: BatchHeader, base_offset: int, leader_epoch: int, stamp_time: int | None
) -> BatchHeader:
    position = header.position
    if header.records_count <= 0 or header.records_count != header.last_offset_delta + 1:
        raise InvalidAppendError(
            f"batch at position {position} declares {header.records_count} records "
            f"over {header.last_offset_delta + 1} offsets; a produced batch must be dense and non-empty"
        )
    stamp_base_offset(data, position, base_offset)
    stamp_partition_leader_epoch(data, position, leader_epoch)
    attributes, max_timestamp, crc = header.attributes, header.max_timestamp, header.crc
    if stamp_time is not None:
        attributes |= TIMESTAMP_TYPE_MASK
        max_timestamp = stamp_time
        _INT16.pack_into(data, position + CRC_START, attributes)
        _INT64.pack_into(data, position + MAX_TIMESTAMP_OFFSET, stamp_time)
        crc = batch_crc(data, position, header.size)
        _UINT32.pack_into(data, position + CRC_OFFSET, crc)
    # Built directly: dataclasses.replace costs more than the rest of the stamping.
    return BatchHeader(
        base_offset,
        header.batch_length,
        leader_epoch,
        header.magic,
        crc,
        attributes,
        header.last_offset_delta,
        header.base_timestamp,
        max_timestamp,
        header.producer_id,
        header.producer_epoch,
        header.base_sequence,
        header.records_count,
        position,
    )
