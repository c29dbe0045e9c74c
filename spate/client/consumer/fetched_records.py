"""Turning one partition's fetched bytes into :class:`FetchedBatch` columns, or :class:`RawBatch` sections.

Pure: bytes in, batches out. ``select_partition_batches`` does every step
below except decoding records, and hands out each data batch as a
:class:`RawBatch` (for readers with their own decoder);
``decode_partition_records`` decodes those into columns. What a fetch can hand back, and what is done
with it:

* whole batches, the last possibly cut short by the size limit: a trailing
  partial batch is dropped (it is fetched again next time);
* a first batch that starts below the fetch offset (the broker returns
  whole batches): its records below the offset are skipped;
* control batches (transaction markers): never returned, but the position
  moves past them, so a consumer never re-fetches the same marker;
* under ``read_committed``, batches of aborted transactions: skipped, using
  the response's aborted-transaction list the way Kafka's consumer does (a
  producer id joins the aborted set at its transaction's first offset and
  leaves it at its ABORT marker);
* gaps in offsets (compaction, markers): positions follow each batch's
  ``next_offset``, never ``last record + 1``.

Malformed batches raise ``CorruptRecordError``; ``check_crcs=False`` skips
only the CRC comparison, never the framing checks.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field
from typing import Any, Iterable

from spate.client.consumer.consumer_record import FetchedBatch, RawBatch
from spate.records.batch import HEADER_SIZE, LOG_OVERHEAD, BatchHeader, peek_offset_and_length, validate_batch
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from spate.records.control import ControlType, parse_control_record
from spate.records.reader import decode_batch_columns, records_section
from spate.records.record import Record, TimestampType, decode_record
from spate.structs import IsolationLevel


@dataclass(slots=True)
class PartitionBatches:
    """One partition's fetched data batches, undecoded; fields as in :class:`PartitionRecords`."""

    batches: list[RawBatch] = field(default_factory=list)
    next_offset: int = 0
    oversized_batch_offset: int | None = None


@dataclass(slots=True)
class PartitionRecords:
    """The batches decoded from one partition's fetched bytes.

    ``next_offset`` is the fetch position after every complete batch seen
    (returned or skipped); it equals the fetch offset when nothing complete
    arrived. ``oversized_batch_offset`` is set when the bytes held only part
    of a single batch: the batch is larger than the fetch size allowed.
    """

    batches: list[FetchedBatch] = field(default_factory=list)
    next_offset: int = 0
    oversized_batch_offset: int | None = None


def decode_partition_records(
    topic: str,
    partition: int,
    data: bytes | bytearray | memoryview | None,
    fetch_offset: int,
    *,
    isolation_level: int = 0,
    aborted_transactions: Iterable[Any] | None = None,
    check_crcs: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> PartitionRecords:
    """Decode a fetch response's records for one partition, starting at ``fetch_offset``.

    ``aborted_transactions`` holds objects with ``producer_id`` and
    ``first_offset`` (the Fetch response's entries); it matters only for
    ``read_committed``.
    """
    raw = select_partition_batches(
        topic,
        partition,
        data,
        fetch_offset,
        isolation_level=isolation_level,
        aborted_transactions=aborted_transactions,
        check_crcs=check_crcs,
        max_decompressed_size=max_decompressed_size,
    )
    result = PartitionRecords(next_offset=raw.next_offset, oversized_batch_offset=raw.oversized_batch_offset)
    for section in raw.batches:
        batch = decode_raw_batch(section, max_decompressed_size)
        if batch is not None:
            result.batches.append(batch)
    return result


def select_partition_batches(
    topic: str,
    partition: int,
    data: bytes | bytearray | memoryview | None,
    fetch_offset: int,
    *,
    isolation_level: int = 0,
    aborted_transactions: Iterable[Any] | None = None,
    check_crcs: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> PartitionBatches:
    """The data batches of a partition's fetched bytes a consumer returns, undecoded.

    Every batch header (and, with ``check_crcs``, CRC) is validated, control
    batches and, under read_committed, aborted transactions' batches are
    stepped over; the records themselves are not decoded.
    """
    result = PartitionBatches(next_offset=fetch_offset)
    if not data:
        return result
    # A read-only view (the records of a decoded response, over its frame's bytes) is kept as it is:
    # copying it would cost as much as the rest of the selection.
    buf = data if isinstance(data, (bytes, bytearray)) or _is_immutable_view(data) else bytes(data)
    read_committed = isolation_level == IsolationLevel.READ_COMMITTED
    pending_aborts = [(a.first_offset, a.producer_id) for a in aborted_transactions or ()] if read_committed else []
    heapq.heapify(pending_aborts)
    aborted_producers: set[int] = set()
    total = len(buf)
    position = 0
    while total - position >= LOG_OVERHEAD:
        base_offset, length = peek_offset_and_length(buf, position)
        size = length + LOG_OVERHEAD
        if position + size > total:
            if position == 0 and total >= HEADER_SIZE:
                result.oversized_batch_offset = base_offset
            break  # a batch cut short by the fetch size; the next fetch brings it whole
        header = validate_batch(buf, position, check_crc=check_crcs)
        position += size
        if header.last_offset < result.next_offset:
            continue  # wholly below the fetch position
        if read_committed and header.has_producer_id:
            while pending_aborts and pending_aborts[0][0] <= header.last_offset:
                aborted_producers.add(heapq.heappop(pending_aborts)[1])
            if header.is_control:
                if _is_abort_marker(buf, header, max_decompressed_size):
                    aborted_producers.discard(header.producer_id)
            elif header.is_transactional and header.producer_id in aborted_producers:
                result.next_offset = header.next_offset
                continue
        if not header.is_control:
            result.batches.append(RawBatch(topic, partition, buf, header, result.next_offset))
        result.next_offset = header.next_offset
    return result


def _is_immutable_view(data: object) -> bool:
    return isinstance(data, memoryview) and data.readonly and isinstance(data.obj, bytes)


def _is_abort_marker(buf: bytes | bytearray | memoryview, header: BatchHeader, max_size: int) -> bool:
    section = records_section(buf, header, max_size)
    if header.records_count < 1:
        return False
    delta, _, key, value, _, _ = decode_record(section, 0)
    control_type, _ = parse_control_record(Record(header.base_offset + delta, header.max_timestamp, key, value))
    return control_type == ControlType.ABORT


def decode_raw_batch(raw: RawBatch, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> FetchedBatch | None:
    """The records of ``raw`` from its ``start_offset`` on, as columns; None if there are none."""
    header = raw.header
    # The header and, when asked to, the CRC were validated when the batch was selected.
    columns = decode_batch_columns(raw.buffer, header.position, max_decompressed_size=max_size, check_crc=False)
    offsets, timestamps, keys = columns.offsets, columns.timestamps, columns.keys
    values, headers = columns.values, columns.headers
    skip = bisect.bisect_left(offsets, raw.start_offset)
    if skip == len(offsets):
        return None
    if skip:
        del offsets[:skip], timestamps[:skip], keys[:skip], values[:skip], headers[:skip]
    kind = TimestampType.LOG_APPEND_TIME if header.is_log_append_time else TimestampType.CREATE_TIME
    return FetchedBatch(
        raw.topic,
        raw.partition,
        offsets,
        timestamps,
        keys,
        values,
        headers,
        kind,
        header.next_offset,
        header.partition_leader_epoch,
    )
