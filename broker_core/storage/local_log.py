"""One partition's local log: an ordered run of segments with one active at the end.

Kafka's ``LocalLog``: segments, offsets, appending and rolling, reading and
truncation live here. Its other concerns are classes of their own, mixed
into ``LocalLog`` so that callers see one object: ``AbortedTxnIndexes``
(``aborted_txns.py``), ``LogRetention`` (``log_retention.py``: retention,
DeleteRecords, delayed deletion of removed segments), ``SegmentReplacement``
(``segment_replacement.py``: compaction's swap) and ``LogFlushPolicy``
(``log_flusher.py``: when the log flushes). Producer state and leader epochs
are the ``UnifiedLog``'s; the log manager opens and ages local logs.

Offsets: ``log_start_offset`` is the first offset readers may ask for (it
moves with retention and DeleteRecords); ``log_end_offset`` is the offset the
next appended record gets. Both only move forward, except through explicit
truncation (a follower aligning with its leader).

Concurrency: one writer per partition. The broker's event loop runs appends,
reads and maintenance on one thread, so no locks are taken. A read returns a
``FetchSlice`` (file, position, size) whose bytes stay valid across later
appends and, after the segment is removed, until its delayed deletion runs.

Durability: appends go to the OS page cache. ``flush`` fsyncs up to an offset
and advances the recovery point (``LogFlusher``). After a crash the loader
re-validates everything above the recovery point. Queries spanning segments
are ``LogSegments'``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from broker_core.storage.aborted_txns import AbortedTxnIndexes
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import (
    AppendTooLargeError,
    LogClosedError,
    LogDirError,
    OffsetOutOfRangeError,
)
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.files import TopicPartition, parse_partition_dir_name
from broker_core.storage.loader import LoadedLog, load_log
from broker_core.storage.log_dir_failures import LogDirFailureChannel, reports_io_errors
from broker_core.storage.log_flusher import LogFlusher, LogFlushPolicy
from broker_core.storage.log_retention import LogRetention
from broker_core.storage.log_validator import AppendInfo, ValidatedAppend, validate_append
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.partition_files import PartitionFiles
from broker_core.storage.pending_deletes import PendingDeletes
from broker_core.storage.segment import LogSegment, SegmentInfo
from broker_core.storage.segment_replacement import SegmentReplacement
from broker_core.storage.segments import LogSegments
from broker_core.storage.time_index import TimestampOffset

Clock = Callable[[], int]


class LocalLog(AbortedTxnIndexes, LogRetention, SegmentReplacement, LogFlushPolicy):
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

    def take_partition_files(self) -> PartitionFiles | None:
        """What loading read for the partition's producer state and epoch cache, once (None afterwards;
        see ``partition_files``)."""
        files, self._partition_files = self._partition_files, None
        return files

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
        segment = self._new_segment(base_offset)
        segment.activate()
        self._segments.add(segment)
        return segment

    def _new_segment(self, base_offset: int) -> LogSegment:
        """The segment at ``base_offset`` of this log's directory, under the current config (files not read)."""
        config = self._config
        return LogSegment(
            self._dir, base_offset, index_interval_bytes=config.index_interval_bytes,
            max_index_size=config.segment_index_bytes, created_ms=self._clock(), open_files=self._open_files,
            preallocate_bytes=config.preallocate_bytes,
        )

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
