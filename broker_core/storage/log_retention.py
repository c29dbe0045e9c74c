"""Retention applied to a local log: old segments leave, the log start offset moves forward.

Kafka's ``UnifiedLog.deleteOldSegments`` and ``maybeIncrementLogStartOffset``.
Which segments may go is ``retention.py``'s pure decision; this half applies
it: it takes the chosen prefix of segments out of the log, moves the log
start offset to the first segment left, and hands the removed segments to
``PendingDeletes``, which renames their files ``.deleted`` and unlinks them
after ``file.delete.delay.ms``. Rolling, truncation and compaction remove
segments through the same ``_remove_segments``.

``LogRetention`` is mixed into ``LocalLog``: it reads and moves the log's
state (segments, offsets, flusher, pending deletes) on the log's single
writer thread, and relies on ``LocalLog._check_open`` and ``_io_failed``.
"""

from __future__ import annotations

from typing import Callable

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.log_dir_failures import reports_io_errors
from broker_core.storage.log_flusher import LogFlusher
from broker_core.storage.pending_deletes import PendingDeletes
from broker_core.storage.retention import RetentionPolicy, deletable_prefix, retention_target
from broker_core.storage.segment import LogSegment
from broker_core.storage.segments import LogSegments


class LogRetention:
    """Retention, DeleteRecords and segment removal of one ``LocalLog``."""

    # The log's state, set by ``LocalLog.__init__``.
    _config: LogConfig
    _clock: Callable[[], int]
    _segments: LogSegments
    _flusher: LogFlusher
    _pending: PendingDeletes
    _log_start_offset: int
    _next_offset: int
    _check_open: Callable[[], None]

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
