"""How much of one local log is on disk: its recovery point, and the fsyncs that move it.

Appends go to the OS page cache. Everything below the recovery point was
fsynced: the segments holding it and, when segment files were created,
renamed or removed since the last flush, the partition directory (a new
segment whose directory entry is lost after a crash is as lost as its data).
After a crash the loader re-validates only what lies above the recovery
point, which the log manager checkpoints. Files that describe the data (the
leader-epoch checkpoint) register a ``before_flush`` callback and are made
durable before the data they describe.

The policy (``flush.messages`` inline, ``flush.ms`` and rolled segments from
the log manager's scheduler) is the log's; this class does the fsyncs and
keeps the bookkeeping. Not thread-safe: the log's single writer owns it.

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

from broker_core.storage.errors import LogDirError
from broker_core.storage.fs import fsync_directory, fsync_file
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
