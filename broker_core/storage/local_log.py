"""One partition's local log: an ordered run of segments with one active at the end.

Kafka's ``LocalLog``: segments, offsets, rolling, reading, truncation,
retention and flushing. Producer state and leader epochs are the
``UnifiedLog``'s, which the partition appends through; the log manager opens
and ages local logs.

Offsets: ``log_start_offset`` is the first offset readers may ask for (it
moves with retention and DeleteRecords); ``log_end_offset`` is the offset the
next appended record gets. Both only move forward, except through explicit
truncation (a follower aligning with its leader).

Concurrency: one writer per partition. The broker's event loop runs appends,
reads and maintenance on one thread, so no locks are taken. A read returns a
``FetchSlice`` (file, position, size) whose bytes stay valid across later
appends and, after the segment is removed, until its delayed deletion runs.

Durability: appends go to the OS page cache. ``flush`` fsyncs up to an offset
and advances the recovery point (``LogFlusher``); the ``flush.messages``
policy flushes inline, ``flush.ms`` and the flush of rolled segments are left
to ``flush_if_due`` / ``flush_rolled_segments``, which the log manager's
scheduler calls, so the append path never waits on a whole segment's fsync.
After a crash the loader re-validates everything above the recovery point.

Aborted transactions: each segment keeps the aborted-transaction index of
the markers it holds (``append_aborted_txn``); read_committed fetches ask
``collect_aborted_transactions`` which aborts overlap the data they return.

Queries spanning segments are ``LogSegments``'; which segments retention may
delete is ``retention.py``'s pure decision.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from broker_core.storage.cleaner.segment_cleaner import CleanedSegment
from broker_core.storage.cleaner.swap import check_replaceable, commit_swap, discard_cleaned
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import (
    AppendTooLargeError,
    CorruptIndexError,
    LogClosedError,
    LogDirError,
    OffsetOutOfRangeError,
)
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.file_records import NO_CRC_CHECK
from broker_core.storage.files import TopicPartition, parse_partition_dir_name
from broker_core.storage.loader import LoadedLog, load_log
from broker_core.storage.log_dir_failures import LogDirFailureChannel, reports_io_errors
from broker_core.storage.log_flusher import LogFlusher, PendingFlush
from broker_core.storage.log_validator import AppendInfo, ValidatedAppend, validate_append
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.partition_files import PartitionFiles
from broker_core.storage.pending_deletes import PendingDeletes
from broker_core.storage.retention import RetentionPolicy, deletable_prefix, retention_target
from broker_core.storage.segment import LogSegment, SegmentInfo
from broker_core.storage.segments import LogSegments
from broker_core.storage.time_index import TimestampOffset
from broker_core.storage.txn_index import AbortedTxn
from spate.records.errors import CorruptRecordError

Clock = Callable[[], int]


class LocalLog:
    """The local log of one partition. Create with :meth:`LocalLog.open`."""

    def __init__(self, directory: Path, config: LogConfig, clock: Clock, loaded: LoadedLog) -> None:
        self._dir = directory
        self._config = config
        self._clock = clock
        self._segments: LogSegments = loaded.segments
        self._open_files = loaded.open_files
        self._log_start_offset = loaded.log_start_offset
        self._next_offset = loaded.next_offset
        self._flusher = LogFlusher(directory, loaded.segments, recovery_point=loaded.recovery_point, clock=clock)
        if loaded.directory_changed:
            self._flusher.mark_directory_dirty()
        self._txn_index_lost_from = loaded.txn_index_lost_from
        self._partition_files = loaded.partition_files
        self._pending = PendingDeletes()
        self._closed = False
        self.topic_partition: TopicPartition | None = parse_partition_dir_name(directory.name)
        # Hears of I/O errors (set by the log manager); None: errors are only raised.
        self.failures: LogDirFailureChannel | None = None

    @classmethod
    def open(
        cls, directory: Path, config: LogConfig, *, clock: Clock, recovery_point: int | None = 0,
        log_start_offset: int | None = None, had_clean_shutdown: bool = False,
        open_files: OpenFileCache | None = None,
    ) -> LocalLog:
        """Open (or create) the log in ``directory``, recovering what a crash left.

        ``recovery_point`` is the offset below which data is known flushed
        (None: not checkpointed); ``had_clean_shutdown`` skips re-validation
        entirely and opens the segments lazily (see the loader): the recovery
        point is then the one checkpointed after the log's last flush, its
        log end offset.
        """
        loaded = load_log(
            directory, config, clock=clock, recovery_point=recovery_point,
            log_start_offset=log_start_offset, had_clean_shutdown=had_clean_shutdown, open_files=open_files,
        )
        return cls(directory, config, clock, loaded)

    # ------------------------------------------------------------ properties

    @property
    def directory(self) -> Path:
        return self._dir

    @property
    def config(self) -> LogConfig:
        return self._config

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._next_offset

    @property
    def recovery_point(self) -> int:
        """Offset below which every batch is fsynced."""
        return self._flusher.recovery_point

    @property
    def txn_index_lost_from(self) -> int | None:
        """Base offset of the first segment whose aborted-transaction index was
        discarded as corrupt when the log was loaded (None when none was)."""
        return self._txn_index_lost_from

    @property
    def unflushed_messages(self) -> int:
        return self._next_offset - self._flusher.recovery_point

    @property
    def last_flush_ms(self) -> int:
        return self._flusher.last_flush_ms

    @property
    def size_in_bytes(self) -> int:
        return self._segments.size_in_bytes()

    @property
    def segments(self) -> list[SegmentInfo]:
        return [segment.info() for segment in self._segments]

    @property
    def number_of_segments(self) -> int:
        return len(self._segments)

    @property
    def pending_deletes(self) -> int:
        return len(self._pending)

    @property
    def is_closed(self) -> bool:
        return self._closed

    @property
    def active_segment(self) -> LogSegment:
        segment = self._segments.last
        if segment is None:
            raise LogClosedError(self._dir)
        return segment

    def update_config(self, config: LogConfig) -> None:
        """Use ``config`` from now on (a topic config change)."""
        self._check_open()
        if config.segment_index_bytes != self._config.segment_index_bytes:
            self.active_segment.resize_indexes(config.segment_index_bytes)
        self.active_segment.set_index_interval(config.index_interval_bytes)
        self._config = config

    # --------------------------------------------------------------- append

    def append(
        self, records: bytes | bytearray | memoryview, *, leader_epoch: int = -1, assign_offsets: bool = True
    ) -> AppendInfo:
        """Validate (``validate_append``) and append whole v2 batches; return what was written.

        With ``assign_offsets`` the batches get offsets from the log end
        offset and ``leader_epoch``; without it (a follower) they keep theirs.
        Raises what ``validate_append`` and ``append_validated`` raise; the
        log is unchanged then.
        """
        self._check_open()
        now = self._clock()
        validated = validate_append(
            records, self._config, next_offset=self._next_offset, assign_offsets=assign_offsets,
            leader_epoch=leader_epoch, now_ms=now,
        )
        return self.append_validated(validated, now_ms=now)

    @reports_io_errors
    def append_validated(self, staged: ValidatedAppend, *, now_ms: int) -> AppendInfo:
        """Append batches ``validate_append`` checked against this log's end; return what was written.

        The log rolls first when the active segment cannot take the
        bytes, is older than ``segment.ms`` or has a full index. Raises
        ``AppendTooLargeError`` for an append larger than ``segment.bytes``
        and, on an I/O failure, ``LogDirError`` (the log is unchanged then).
        """
        self._check_open()
        if staged.first_offset < self._next_offset:
            raise ValueError(f"validated append starts at {staged.first_offset}, below the log end {self._next_offset}")
        config = self._config
        size = len(staged.data)
        if size > config.segment_bytes:
            raise AppendTooLargeError(size, config.segment_bytes)
        segment = self._maybe_roll(size, staged.first_offset, staged.last_offset, now_ms)
        segment.append(staged.data, staged.headers, now_ms=now_ms)
        self._next_offset = staged.last_offset + 1
        if self.unflushed_messages >= config.flush_messages:
            self.flush()
        return staged.info()

    def _maybe_roll(self, size: int, first_offset: int, last_offset: int, now_ms: int) -> LogSegment:
        segment = self.active_segment
        config = self._config
        if segment.should_roll(size, last_offset, now_ms, config.segment_bytes, config.max_segment_ms):
            return self._roll(first_offset)
        return segment

    @reports_io_errors
    def roll(self) -> SegmentInfo:
        """Start a new active segment at the log end offset (no-op on an empty active segment)."""
        self._check_open()
        return self._roll(self._next_offset).info()

    def _roll(self, base_offset: int) -> LogSegment:
        base_offset = max(base_offset, self._next_offset)
        active = self.active_segment
        if active.is_empty:
            if active.base_offset == base_offset:
                return active
            # Offsets jump (a follower copying a compacted leader): the empty
            # segment would hold nothing, so the new one replaces it.
            self._remove_segments([active])
        else:
            active.on_become_inactive()
            active.release_indexes()
        segment = self._add_active_segment(base_offset)
        self._flusher.mark_directory_dirty()
        return segment

    def _add_active_segment(self, base_offset: int) -> LogSegment:
        config = self._config
        segment = LogSegment(
            self._dir, base_offset, index_interval_bytes=config.index_interval_bytes,
            max_index_size=config.segment_index_bytes, created_ms=self._clock(), open_files=self._open_files,
        )
        segment.activate()
        self._segments.add(segment)
        return segment

    # ----------------------------------------------------------------- read

    @reports_io_errors
    def read(
        self, start_offset: int, max_bytes: int, *, max_offset: int | None = None, min_one_batch: bool = True
    ) -> FetchSlice:
        """Whole batches from the one holding ``start_offset``, from one segment.

        At most ``max_bytes`` (but one batch of any size when
        ``min_one_batch``), and only batches that end below ``max_offset``
        (the high watermark or last stable offset) when given. Raises
        ``OffsetOutOfRangeError`` outside ``[log_start_offset,
        log_end_offset]``; at the log end the slice is empty.
        """
        self._check_open()
        if not self._log_start_offset <= start_offset <= self._next_offset:
            raise OffsetOutOfRangeError(start_offset, self._log_start_offset, self._next_offset)
        if start_offset == self._next_offset or (max_offset is not None and start_offset >= max_offset):
            return self._empty_slice(start_offset)
        found = self._segments.read(start_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)
        return found if found is not None else self._empty_slice(start_offset)

    def _empty_slice(self, offset: int) -> FetchSlice:
        active = self.active_segment
        return FetchSlice(active.file, active.size, 0, offset, offset - 1, active.base_offset)

    # ------------------------------------------------- aborted transactions

    @reports_io_errors
    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        """Index an aborted transaction in the segment holding its marker (``txn.last_offset``).

        Entries must arrive in marker order; the index is flushed with its segment.
        """
        self._check_open()
        segment = self._segments.floor(txn.last_offset)
        if segment is None or txn.last_offset >= self._next_offset:
            raise OffsetOutOfRangeError(
                txn.last_offset, self._log_start_offset, self._next_offset, what="abort marker offset"
            )
        segment.append_aborted_txn(txn)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions a fetch of ``start_offset`` up to ``upper_bound_offset`` overlaps.

        Those whose marker is at or above ``start_offset`` and whose first
        offset is below ``upper_bound_offset``, in marker order (see
        ``LogSegments.collect_aborted_transactions``).
        """
        self._check_open()
        return self._segments.collect_aborted_transactions(start_offset, upper_bound_offset)

    def truncate_aborted_txns_from(self, offset: int) -> int:
        """Drop the index entries of markers at or above ``offset``; return how many went.

        The partition calls this before replaying the log from ``offset`` into
        its producer state, which appends the entries again.
        """
        self._check_open()
        return sum(segment.txn_index.truncate_to(offset) for segment in self._segments.from_offset(offset))

    def take_partition_files(self) -> PartitionFiles | None:
        """What loading read for the partition's producer state and epoch cache, once (None afterwards;
        see ``partition_files``)."""
        files, self._partition_files = self._partition_files, None
        return files

    def forget_lost_txn_index(self) -> None:
        """Note that the entries of a discarded aborted-transaction index were rebuilt."""
        self._txn_index_lost_from = None

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first batch at or after the log start whose maxTimestamp is >= ``timestamp``.

        Batch granularity: the answer is the batch's maxTimestamp and base
        offset (never below the log start offset); a caller wanting the exact
        record decodes that batch. None when no batch is that recent.
        """
        self._check_open()
        return self._segments.offset_for_timestamp(timestamp, self._log_start_offset)

    def max_timestamp_and_offset(self) -> TimestampOffset | None:
        """The largest batch timestamp in the log and the base offset of its batch."""
        self._check_open()
        return self._segments.max_timestamp_and_offset(self._log_start_offset)

    # ----------------------------------------------------------- truncation

    @reports_io_errors
    def truncate_to(self, offset: int) -> bool:
        """Drop every batch reaching ``offset`` or beyond; return whether anything went.

        A batch straddling ``offset`` goes as a whole. Used by followers to
        align with their leader; the result is fsynced so the removed data
        cannot come back after a crash.
        """
        self._check_open()
        if offset < 0:
            raise ValueError(f"cannot truncate to negative offset {offset}")
        if offset >= self._next_offset:
            return False
        first = self._segments.first
        if first is None or offset < first.base_offset or offset < self._log_start_offset:
            # Nothing readable survives; the log continues empty at ``offset``.
            self.truncate_fully_and_start_at(offset)
            return True
        later = [segment for segment in self._segments if segment.base_offset > offset]
        target = self._segments.floor(offset)
        if target is None:
            raise RuntimeError("a segment holds every offset at or above the first base offset")
        self._remove_segments(later)
        target.truncate_to(offset)
        target.activate()
        target.flush()
        self._next_offset = target.next_offset
        self._log_start_offset = min(self._log_start_offset, self._next_offset)
        self._flusher.truncated_to(self._next_offset)
        self._flusher.sync_directory()
        return True

    @reports_io_errors
    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Remove every segment and continue empty at ``offset``."""
        self._check_open()
        if offset < 0:
            raise ValueError(f"cannot start a log at negative offset {offset}")
        self._remove_segments(list(self._segments))
        self._add_active_segment(offset)
        self._next_offset = offset
        self._log_start_offset = offset
        self._flusher.restarted_at(offset)
        self._flusher.sync_directory()

    # ------------------------------------------------------------ retention

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Move the log start offset forward to ``offset`` (DeleteRecords).

        Segments wholly below the new start are deleted; the active one stays.
        Returns whether the start moved. Raises ``OffsetOutOfRangeError`` past
        the log end offset.
        """
        self._check_open()
        if offset > self._next_offset:
            raise OffsetOutOfRangeError(offset, self._log_start_offset, self._next_offset, what="new log start offset")
        if offset <= self._log_start_offset:
            return False
        self._log_start_offset = offset
        self._apply_retention(self._clock(), None, policy=RetentionPolicy(-1, -1, delete_enabled=False))
        return True

    @reports_io_errors
    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: make ``offset`` the first readable one; return the log start offset."""
        self.maybe_increment_log_start_offset(offset)
        return self._log_start_offset

    @reports_io_errors
    def delete_old_segments(
        self, now_ms: int | None = None, *, high_watermark: int | None = None, archived_offset: int | None = None
    ) -> int:
        """Apply retention (time, size, log start offset); return segments deleted.

        Only segments whose successor starts at or below ``high_watermark``
        (when given) are candidates, and never the active segment. A topic
        that archives deletes by time and size only below ``archived_offset``
        (None: nothing is known archived beyond the log start offset).
        """
        self._check_open()
        config = self._config
        policy = RetentionPolicy(config.retention_ms, config.retention_bytes, config.delete_enabled)
        now = self._clock() if now_ms is None else now_ms
        bound = None
        if config.archiving:
            bound = max(self._log_start_offset, -1 if archived_offset is None else archived_offset)
        return self._apply_retention(now, high_watermark, policy=policy, archived_offset=bound)

    def retention_target(self, now_ms: int | None = None, *, high_watermark: int | None = None) -> int:
        """Where time and size retention would move the log start, archive or not (see ``retention.py``)."""
        self._check_open()
        config = self._config
        return retention_target(
            self._segments.retention_candidates(),
            policy=RetentionPolicy(config.retention_ms, config.retention_bytes, config.delete_enabled),
            now_ms=self._clock() if now_ms is None else now_ms, log_start_offset=self._log_start_offset,
            total_size=self._segments.size_in_bytes(), upper_bound_offset=high_watermark,
        )

    def _apply_retention(
        self, now_ms: int, high_watermark: int | None, *, policy: RetentionPolicy, archived_offset: int | None = None
    ) -> int:
        """Delete the prefix of segments ``deletable_prefix`` picks; return how many went."""
        chosen = deletable_prefix(
            self._segments.retention_candidates(), policy=policy, now_ms=now_ms,
            log_start_offset=self._log_start_offset, total_size=self._segments.size_in_bytes(),
            upper_bound_offset=high_watermark, archived_offset=archived_offset,
        )
        if chosen:
            self._remove_segments(list(self._segments)[: len(chosen)])
            first = self._segments.first
            if first is not None:
                self._log_start_offset = max(self._log_start_offset, first.base_offset)
        return len(chosen)

    # ----------------------------------------------------------- compaction

    @reports_io_errors
    def replace_segments(self, cleaned: CleanedSegment) -> None:
        """Put a cleaned segment in place of the rolled segments it was built from (``cleaner/swap.py``).

        Raises ``StalePlanError``, and drops the cleaned files, when the log
        no longer holds those segments as they were (retention, truncation).
        """
        self._check_open()
        current = [self._segments.get(snapshot.base_offset) for snapshot in cleaned.replaces]
        last = current[-1]
        successor = self._segments.higher(last.base_offset) if last is not None else None
        try:
            check_replaceable(cleaned, current, successor.base_offset if successor is not None else None)
        except Exception:
            discard_cleaned(cleaned)
            raise
        old = [segment for segment in current if segment is not None]
        new = commit_swap(cleaned, old, retire=self._remove_segments, open_segment=self._open_cleaned)
        self._segments.add(new)
        self._flusher.mark_directory_dirty()

    def _open_cleaned(self, base_offset: int) -> LogSegment:
        config = self._config
        segment = LogSegment(
            self._dir, base_offset, index_interval_bytes=config.index_interval_bytes,
            max_index_size=config.segment_index_bytes, created_ms=self._clock(), open_files=self._open_files,
        )
        try:
            segment.load()
        except (CorruptIndexError, CorruptRecordError):
            segment.recover(crc_from_offset=NO_CRC_CHECK)
            segment.on_become_inactive()
        segment.release_indexes()
        return segment

    def _remove_segments(self, segments: list[LogSegment]) -> None:
        """Take segments out of the log now; delete their files after the delay."""
        if not segments:
            return
        delay = self._config.file_delete_delay_ms
        due = None if delay == 0 else self._clock() + delay
        for segment in segments:
            self._segments.remove(segment.base_offset)
            self._pending.retire(segment, due)
        self._flusher.mark_directory_dirty()

    @reports_io_errors
    def run_pending_deletes(self, now_ms: int | None = None) -> int:
        """Delete the files of removed segments whose delay has passed; return how many."""
        return self._pending.run(self._clock() if now_ms is None else now_ms)

    # ---------------------------------------------------------------- flush

    @reports_io_errors
    def flush(self, up_to_offset: int | None = None) -> None:
        """fsync every segment holding offsets below ``up_to_offset`` (default: all)."""
        self._check_open()
        self._flusher.flush(self._next_offset if up_to_offset is None else min(up_to_offset, self._next_offset))

    def mark_directory_dirty(self) -> None:
        """A file was created or renamed in the partition directory: the next flush fsyncs the directory."""
        self._flusher.mark_directory_dirty()

    def add_before_flush(self, callback: Callable[[], bool | None]) -> None:
        """Run ``callback`` before every flush, so what it syncs is on disk before the data it describes."""
        self._flusher.add_before_flush(callback)

    def needs_scheduled_flush(self, now_ms: int) -> bool:
        """Whether ``flush_rolled_segments`` or ``flush_if_due`` has work: checked for every log every second,
        so it costs a few attribute reads."""
        if self._closed:
            return False
        recovery_point = self._flusher.recovery_point
        if recovery_point >= self._next_offset:
            return False
        segment = self._segments.last
        if segment is not None and recovery_point < segment.base_offset:
            return True
        return now_ms - self._flusher.last_flush_ms >= self._config.flush_ms

    @reports_io_errors
    def flush_if_due(self, now_ms: int) -> bool:
        """Apply ``flush.ms``: flush when unflushed data waited that long."""
        if self._closed or self.unflushed_messages == 0:
            return False
        if now_ms - self._flusher.last_flush_ms < self._config.flush_ms:
            return False
        self.flush()
        return True

    @reports_io_errors
    def flush_rolled_segments(self) -> bool:
        """fsync segments that rolled since the last flush (up to the active segment)."""
        if self._closed:
            return False
        active_base = self.active_segment.base_offset
        if self._flusher.recovery_point >= active_base:
            return False
        self.flush(active_base)
        return True

    @reports_io_errors
    def begin_scheduled_flush(self, now_ms: int) -> PendingFlush | None:
        """What ``flush_rolled_segments`` and ``flush_if_due`` would fsync, prepared to run off the writer's
        thread (see ``LogFlusher.begin``); None when neither has work."""
        if self._closed:
            return None
        due = self.unflushed_messages > 0 and now_ms - self._flusher.last_flush_ms >= self._config.flush_ms
        active_base = self.active_segment.base_offset
        if due:
            return self._flusher.begin(self._next_offset)
        if self._flusher.recovery_point < active_base:
            return self._flusher.begin(active_base)
        return None

    @reports_io_errors
    def complete_flush(self, pending: PendingFlush) -> None:
        """Take the outcome of a flush from ``begin_scheduled_flush`` once its fsyncs ran."""
        if not self._closed:
            self._flusher.complete(pending)

    # ------------------------------------------------------------ lifecycle

    def release_files(self) -> None:
        """Give every descriptor back to the open-file cache; the files reopen on their next use."""
        for segment in self._segments:
            segment.release_files()

    def close(self) -> None:
        """Trim indexes, close every file and finish pending deletions."""
        if self._closed:
            return
        for segment in self._segments:
            segment.close()
        self._pending.run_all()
        self._closed = True

    def delete(self) -> None:
        """Close every file and remove the whole partition directory."""
        for segment in self._segments:
            segment.close_handles()
        self._pending.close_all()
        self._closed = True
        shutil.rmtree(self._dir, ignore_errors=True)

    def detach_to(self, new_directory: Path) -> None:
        """Move the partition directory away (its deletion is scheduled) and stop serving.

        File handles stay open, so slices already handed out remain readable
        until :meth:`delete` runs.
        """
        self._check_open()
        try:
            os.replace(self._dir, new_directory)
        except OSError as exc:
            raise LogDirError(self._dir, f"cannot rename to {new_directory.name}: {exc.strerror or exc}") from exc
        self._dir = new_directory
        self._closed = True

    def _io_failed(self, exc: OSError | LogDirError, action: str) -> LogDirError:
        error = exc if isinstance(exc, LogDirError) else LogDirError(self._dir, f"{action} failed: {exc.strerror or exc}")
        if self.failures is not None:
            self.failures.report(self._dir, error)
        return error

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(self._dir)

    def __repr__(self) -> str:
        return (
            f"LocalLog({self._dir.name}, start={self._log_start_offset}, end={self._next_offset}, "
            f"segments={len(self._segments)})"
        )
