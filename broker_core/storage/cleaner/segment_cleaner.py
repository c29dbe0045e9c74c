"""Rewriting a group of rolled segments into one cleaned segment.

What is kept (Kafka's ``LogCleaner`` rules), record by record in offset order:

- a record whose key's latest offset (in the plan) is later is removed;
  records without a key are removed (a compacted topic needs keys);
- a tombstone (null value) is kept until ``delete.retention.ms`` after the
  cleaning that first kept it: that cleaning stamps its batch with the delete
  horizon (Kafka's KIP-534, see ``batch_rewrite``), a later one removes it
  once the horizon has passed;
- records of aborted transactions are removed;
- a COMMIT or ABORT marker is kept while any record of its transaction is
  left; the first cleaning that finds none left stamps its delete horizon,
  and it goes once that has passed;
- a batch whose records all went disappears, except the last batch of a
  producer the log still tracks, which keeps its header (an empty batch) so
  the producer's epoch and sequence stay known after a reload.

Kept batches keep their offsets and headers (``batch_rewrite``). A plan
may end inside the group's last segment (a replica whose segments end
elsewhere than the planner's): the batches from that end on are copied as
they are. The result is
built as a real segment (offset and time indexes, aborted-transaction index
of the markers kept) in a scratch directory, fsynced, and moved next to the
log as ``.cleaned`` files; ``swap`` puts it in place. Runs on a cleaner thread:
it reads only files, never the live log's objects.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from broker_core.storage.cleaner.batch_rewrite import has_delete_horizon, rewrite_batch
from broker_core.storage.cleaner.offset_map import OffsetMap
from broker_core.storage.cleaner.plan import SegmentSnapshot, StalePlanError
from broker_core.storage.cleaner.record_scan import batch_records_section, scan_records
from broker_core.storage.cleaner.segment_reader import read_batches
from broker_core.storage.cleaner.transactions import AbortedTransactions, TxnMarkerTracker
from broker_core.storage.files import FileState, SegmentPaths, segment_paths
from broker_core.storage.segment import INT32_MAX, LogSegment
from spate.records.batch import BatchHeader, parse_header

SCRATCH_DIR = "cleaner-scratch"
_WRITE_BUFFER = 1024 * 1024


@dataclass
class CleanerStats:
    """What cleanings did (summed over passes)."""

    bytes_read: int = 0
    bytes_written: int = 0
    records_read: int = 0
    records_kept: int = 0
    batches_emptied: int = 0
    markers_removed: int = 0
    tombstones_removed: int = 0
    keyless_removed: int = 0
    segments_cleaned: int = 0

    def add(self, other: CleanerStats) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass(frozen=True)
class CleaningRules:
    """Everything besides the records that decides what stays."""

    offset_map: OffsetMap
    aborted: AbortedTransactions
    producer_last_offsets: Mapping[int, int]
    now_ms: int
    delete_retention_ms: int
    clean_end: int | None = None  # batches from here on are kept as they are (None: the whole group is cleaned)

    @property
    def new_delete_horizon_ms(self) -> int:
        """The horizon a batch keeping tombstones for the first time gets."""
        return self.now_ms + self.delete_retention_ms

    def horizon_passed(self, header: BatchHeader) -> bool:
        """Whether the batch's tombstones and spent marker may go now."""
        return has_delete_horizon(header) and header.base_timestamp <= self.now_ms


@dataclass(frozen=True)
class CleanedSegment:
    """A cleaned segment waiting as ``.cleaned`` files, and the segments it replaces."""

    directory: Path
    base_offset: int
    end_offset: int
    replaces: tuple[SegmentSnapshot, ...]
    stats: CleanerStats = field(compare=False)

    def paths(self, state: FileState) -> SegmentPaths:
        return segment_paths(self.directory, self.base_offset, state)


def group_segments(segments: Sequence[SegmentSnapshot], max_size: int) -> list[list[SegmentSnapshot]]:
    """Consecutive segments in groups whose total size stays within ``max_size`` (segment.bytes)
    and whose offsets fit one segment's int32 relative offsets."""
    groups: list[list[SegmentSnapshot]] = []
    for segment in segments:
        current = groups[-1] if groups else None
        if (
            current is not None
            and sum(s.size for s in current) + segment.size <= max_size
            and segment.next_offset - 1 - current[0].base_offset <= INT32_MAX
        ):
            current.append(segment)
        else:
            groups.append([segment])
    return groups


class _GroupWriter:
    """Appends kept batches to the scratch segment, a megabyte at a time."""

    def __init__(self, segment: LogSegment) -> None:
        self.segment = segment
        self._buffer = bytearray()
        self._headers: list[BatchHeader] = []
        self.written = 0

    def add(self, batch: bytes) -> None:
        position = len(self._buffer)
        self._buffer += batch
        self._headers.append(parse_header(self._buffer, position))
        if len(self._buffer) >= _WRITE_BUFFER:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            self.segment.append(self._buffer, self._headers)
            self.written += len(self._buffer)
            self._buffer = bytearray()
            self._headers = []


def clean_group(
    directory: Path,
    group: Sequence[SegmentSnapshot],
    rules: CleaningRules,
    markers: TxnMarkerTracker,
    *,
    index_interval_bytes: int,
    max_index_size: int,
    on_read: Callable[[int], None] | None = None,
) -> CleanedSegment:
    """Clean ``group`` into ``.cleaned`` files in ``directory`` (see the module docstring)."""
    scratch = directory / SCRATCH_DIR
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    base = group[0].base_offset
    stats = CleanerStats(segments_cleaned=len(group))
    segment = LogSegment(
        scratch, base, index_interval_bytes=index_interval_bytes, max_index_size=max_index_size,
        created_ms=rules.now_ms,
    )
    try:
        segment.activate()
        writer = _GroupWriter(segment)
        kept_markers: set[int] = set()
        for source in group:
            for header, batch in read_batches(source.path, source.size, on_read=on_read):
                stats.bytes_read += len(batch)
                out = _beyond_plan(header, batch, rules) or _filter_batch(header, batch, rules, markers, stats)
                if out is not None:
                    writer.add(out)
                    if header.is_control:
                        kept_markers.add(header.base_offset)
        writer.flush()
        stats.bytes_written = writer.written
        end = group[-1].end_offset
        for entry in rules.aborted.with_marker_in(base, end):
            if entry.last_offset in kept_markers:
                segment.append_aborted_txn(entry)
        segment.on_become_inactive()
        segment.flush()
    finally:
        segment.close_handles()
    return _move_beside_log(directory, scratch, base, end, tuple(group), stats)


def _move_beside_log(
    directory: Path, scratch: Path, base: int, end: int, group: tuple[SegmentSnapshot, ...], stats: CleanerStats
) -> CleanedSegment:
    built = segment_paths(scratch, base)
    cleaned = segment_paths(directory, base, FileState.CLEANED)
    for source, target in zip(built.all(), cleaned.all()):
        if source.exists():
            os.replace(source, target)
        else:
            target.unlink(missing_ok=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return CleanedSegment(directory, base, end, group, stats)


def _beyond_plan(header: BatchHeader, batch: bytes, rules: CleaningRules) -> bytes | None:
    """The batch as it is when it lies past the plan's end (a replica whose segment holds the end); else None."""
    end = rules.clean_end
    if end is None or header.last_offset < end:
        return None
    if header.base_offset < end:
        raise StalePlanError(None, f"the plan ends at {end}, inside the batch of offsets "
                             f"{header.base_offset}..{header.last_offset}")
    return batch


def _filter_batch(
    header: BatchHeader, batch: bytes, rules: CleaningRules, markers: TxnMarkerTracker, stats: CleanerStats
) -> bytes | None:
    """The batch as it stays in the log: unchanged, rewritten, emptied, or None (removed)."""
    count = header.records_count
    stats.records_read += count
    if header.is_control:
        return _filter_marker(header, batch, rules, markers, stats)
    section = batch_records_section(batch, header)
    horizon_passed = rules.horizon_passed(header)
    keeps_tombstone = False
    kept = []
    if not (header.is_transactional and rules.aborted.contains(header.producer_id, header.base_offset)):
        records = scan_records(section, header)
        latest = rules.offset_map.latest_of([record.key for record in records])
        for record, newest in zip(records, latest):
            if record.key is None:
                stats.keyless_removed += 1
            elif newest > record.offset:
                pass
            elif record.is_tombstone and horizon_passed:
                stats.tombstones_removed += 1
            else:
                kept.append(record)
                keeps_tombstone = keeps_tombstone or record.is_tombstone
    if header.is_transactional:
        markers.on_data(header.producer_id, bool(kept))
    stats.records_kept += len(kept)
    if keeps_tombstone and not has_delete_horizon(header):
        return rewrite_batch(header, section, kept, delete_horizon_ms=rules.new_delete_horizon_ms)
    if len(kept) == count:
        return batch
    if kept:
        return rewrite_batch(header, section, kept)
    if header.has_producer_id and rules.producer_last_offsets.get(header.producer_id) == header.last_offset:
        stats.batches_emptied += 1
        return rewrite_batch(header, section, [])
    return None


def _filter_marker(
    header: BatchHeader, batch: bytes, rules: CleaningRules, markers: TxnMarkerTracker, stats: CleanerStats
) -> bytes | None:
    """A transaction marker stays while its transaction has records, then until its delete horizon."""
    if markers.on_marker(header.producer_id):
        stats.records_kept += header.records_count
        return batch
    if rules.horizon_passed(header):
        stats.markers_removed += 1
        return None
    stats.records_kept += header.records_count
    if has_delete_horizon(header):
        return batch
    section = batch_records_section(batch, header)
    return rewrite_batch(header, section, scan_records(section, header), delete_horizon_ms=rules.new_delete_horizon_ms)
