"""How much of one local log is on disk: its recovery point, and the fsyncs that move it.

Appends go to the OS page cache. Everything below the recovery point was
fsynced: the segments holding it and, when segment files were created,
renamed or removed since the last flush, the partition directory (a new
segment whose directory entry is lost after a crash is as lost as its data).
After a crash the loader re-validates only what lies above the recovery
point, which the log manager checkpoints. Files that describe the data (the
leader-epoch checkpoint) register a ``before_flush`` callback and are made
durable before the data they describe.

``LogFlusher`` does the fsyncs and keeps the bookkeeping. Not thread-safe:
the log's single writer owns it. The policy is ``LogFlushPolicy``'s, mixed
into ``LocalLog``: ``flush.messages`` flushes inline after an append;
``flush.ms`` and the flush of rolled segments are left to ``flush_if_due`` /
``flush_rolled_segments`` (or ``begin_scheduled_flush``), which the log
manager's scheduler calls, so the append path never waits on a whole
segment's fsync.

A scheduled flush runs in three steps so that its fsyncs leave the event
loop (Kafka's scheduler thread does the same): ``begin`` (the writer's
thread) writes the indexes' pending entries and names the files below the
target; ``PendingFlush.run`` (any thread) fsyncs them by path, which needs
nothing of the log's state, while appends go on; ``complete`` (the writer's
thread again) moves the recovery point to the target — unless the log was
truncated meanwhile, in which case the flush proves nothing and the
recovery point stays. A file gone meanwhile (a segment deleted by
retention, or renamed for deletion) needs no fsync and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogDirError
from broker_core.storage.fs import fsync_directory, fsync_file
from broker_core.storage.log_dir_failures import reports_io_errors
from broker_core.storage.segment import LogSegment
from broker_core.storage.segments import LogSegments


@dataclass
class PendingFlush:
    """The fsyncs of one scheduled flush, prepared on the writer's thread, run on any thread."""

    target: int
    generation: int
    files: list[Path]
    directory: Path | None
    error: OSError | None = field(default=None, init=False)

    def run(self) -> None:
        """fsync every file (skipping files gone since), then the directory; an error is kept for
        ``complete``."""
        try:
            for path in self.files:
                try:
                    fsync_file(path)
                except FileNotFoundError:
                    continue
            if self.directory is not None:
                fsync_directory(self.directory)
        except OSError as exc:
            self.error = exc


def run_flushes(pending: list[tuple[object, PendingFlush]]) -> None:
    """Run the fsyncs of ``LogManager.begin_scheduled_flushes``'s flushes (on a worker thread)."""
    for _, flush in pending:
        flush.run()


class LogFlusher:
    """The recovery point of one log and the fsyncs below it."""

    def __init__(
        self, directory: Path, segments: LogSegments, *, recovery_point: int, clock: Callable[[], int]
    ) -> None:
        self._dir = directory
        self._segments = segments
        self._recovery_point = recovery_point
        self._clock = clock
        self._last_flush_ms = clock()
        self._dir_dirty = False
        self._before_flush: list[Callable[[], bool | None]] = []
        # Bumped by every truncation: a flush begun before one must not move the recovery point.
        self._generation = 0

    def add_before_flush(self, callback: Callable[[], bool | None]) -> None:
        """Run ``callback`` (an fsync of state the data depends on) before every flush that moves data; a
        callback returning True renamed a file in the directory and leaves its fsync to the flush."""
        self._before_flush.append(callback)

    @property
    def recovery_point(self) -> int:
        """Offset below which every batch is fsynced."""
        return self._recovery_point

    @property
    def last_flush_ms(self) -> int:
        return self._last_flush_ms

    def mark_directory_dirty(self) -> None:
        """Segment files were created, renamed or removed: fsync the directory on the next flush."""
        self._dir_dirty = True

    def flush(self, target: int) -> None:
        """fsync every segment holding offsets from the recovery point up to ``target``,
        and the directory when it changed; the recovery point becomes ``target``.

        Raises ``LogDirError`` when an fsync fails (the recovery point stays).
        """
        if target <= self._recovery_point and not self._dir_dirty:
            return
        for callback in self._before_flush:
            if callback():
                self._dir_dirty = True
        try:
            for segment in self._segments.from_offset(self._recovery_point):
                if segment.base_offset >= target:
                    break
                segment.flush()
            if self._dir_dirty:
                self.sync_directory()
        except OSError as exc:
            raise LogDirError(self._dir, f"flush failed: {exc.strerror or exc}") from exc
        self._recovery_point = max(self._recovery_point, target)
        self._last_flush_ms = self._clock()

    def begin(self, target: int) -> PendingFlush | None:
        """Prepare a flush up to ``target`` whose fsyncs may run on another thread (None: nothing to do)."""
        if target <= self._recovery_point and not self._dir_dirty:
            return None
        for callback in self._before_flush:
            if callback():
                self._dir_dirty = True
        files: list[Path] = []
        try:
            for segment in self._segments.from_offset(self._recovery_point):
                if segment.base_offset >= target:
                    break
                segment.offset_index.write_pending()
                segment.time_index.write_pending()
                paths = segment.paths
                files += [paths.log, paths.index, paths.time_index, paths.txn_index]
        except OSError as exc:
            raise LogDirError(self._dir, f"flush failed: {exc.strerror or exc}") from exc
        directory = self._dir if self._dir_dirty else None
        self._dir_dirty = False
        return PendingFlush(max(target, self._recovery_point), self._generation, files, directory)

    def complete(self, pending: PendingFlush) -> None:
        """Take the outcome of ``pending.run()``. Raises ``LogDirError`` when an fsync failed (the recovery
        point stays)."""
        if pending.error is not None:
            if pending.directory is not None:
                self._dir_dirty = True
            exc = pending.error
            raise LogDirError(self._dir, f"flush failed: {exc.strerror or exc}") from exc
        if pending.generation == self._generation:
            self._recovery_point = max(self._recovery_point, pending.target)
        self._last_flush_ms = self._clock()

    def sync_directory(self) -> None:
        """fsync the partition directory now (after a truncation removed or cut segments)."""
        fsync_directory(self._dir)
        self._dir_dirty = False

    def truncated_to(self, log_end_offset: int) -> None:
        """The log now ends at ``log_end_offset``: nothing above it counts as flushed."""
        self._recovery_point = min(self._recovery_point, log_end_offset)
        self._generation += 1

    def restarted_at(self, offset: int) -> None:
        """The log was emptied and continues at ``offset``."""
        self._recovery_point = offset
        self._generation += 1


class LogFlushPolicy:
    """When one ``LocalLog`` flushes: on demand, and as the log manager's scheduler finds it due.

    Mixed into ``LocalLog``, whose state it reads (its ``LogFlusher``,
    segments, log end offset, config) and whose ``_check_open`` and
    ``_io_failed`` it relies on.
    """

    # The log's state, set by ``LocalLog.__init__``.
    _config: LogConfig
    _segments: LogSegments
    _flusher: LogFlusher
    _next_offset: int
    _closed: bool
    _check_open: Callable[[], None]
    active_segment: LogSegment
    unflushed_messages: int

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
