"""The broker's own planner: the latest offset of every key of a dirty range.

It reads the dirty segments in order and records each key's latest offset in
a bounded ``OffsetMap`` (control batches, aborted transactions' records and
keyless records are not keys). When a segment's keys do not fit, the map is
rolled back to the segment before and the plan ends there; the next pass
starts from that segment (Kafka plans ranges larger than its map this way).
A single segment with more keys than the map holds cannot be planned
(``CleanerError``: raise ``log.cleaner.dedupe.buffer.size``).
"""

from __future__ import annotations

from typing import Callable, Sequence

from broker_core.storage.cleaner.offset_map import OffsetMap
from broker_core.storage.cleaner.plan import CleanerError, CleanPlan, SegmentSnapshot
from broker_core.storage.cleaner.record_scan import batch_records_section, scan_keys
from broker_core.storage.cleaner.segment_reader import read_batches
from broker_core.storage.cleaner.transactions import AbortedTransactions
from broker_core.storage.files import TopicPartition


def plan_cleaning(
    tp: TopicPartition,
    dirty: Sequence[SegmentSnapshot],
    dirty_start: int,
    offset_map: OffsetMap,
    aborted: AbortedTransactions,
    *,
    on_read: Callable[[int], None] | None = None,
) -> CleanPlan:
    """A plan for as much of ``dirty`` (consecutive segments from ``dirty_start``) as ``offset_map`` holds."""
    offset_map.clear()
    dirty_end = dirty_start
    for segment in dirty:
        if not _map_segment(segment, dirty_start, offset_map, aborted, on_read):
            if segment is dirty[0]:
                raise CleanerError(
                    f"{tp}: the keys of segment {segment.base_offset} do not fit the offset map "
                    f"({offset_map.capacity} keys); raise log.cleaner.dedupe.buffer.size"
                )
            break
        dirty_end = segment.end_offset
    return CleanPlan(tp, dirty_start, dirty_end, offset_map)


def _map_segment(
    segment: SegmentSnapshot,
    start: int,
    offset_map: OffsetMap,
    aborted: AbortedTransactions,
    on_read: Callable[[int], None] | None,
) -> bool:
    """Add the segment's keys; False (and the map as before) when they do not fit."""
    latest: dict[bytes, int] = {}
    for header, batch in read_batches(segment.path, segment.size, on_read=on_read):
        if header.is_control or header.last_offset < start:
            continue
        if header.is_transactional and aborted.contains(header.producer_id, header.base_offset):
            continue
        scan_keys(batch_records_section(batch, header), header, latest, start)
        if len(latest) > offset_map.capacity:
            return False
    return offset_map.put_latest(latest)
