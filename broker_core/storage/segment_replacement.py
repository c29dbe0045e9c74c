"""Putting a cleaned segment in place of the segments it was built from (Kafka's ``replaceSegments``).

The cleaner builds a compacted copy of a run of rolled segments off the
writer's thread; ``replace_segments`` brings it into the log on the writer's
thread. It first checks that the log still holds those segments as they
were (retention or truncation may have moved on meanwhile), then runs the
crash-safe swap of ``cleaner/swap.py``, which retires the old segments
through the log's ``_remove_segments`` and opens the new one here.

``SegmentReplacement`` is mixed into ``LocalLog``: it uses the log's state
(segments, flusher) and relies on ``LocalLog._check_open``, ``_io_failed``,
``_new_segment`` and ``LogRetention._remove_segments``.
"""

from __future__ import annotations

from typing import Callable

from broker_core.storage.cleaner.segment_cleaner import CleanedSegment
from broker_core.storage.cleaner.swap import check_replaceable, commit_swap, discard_cleaned
from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.file_records import NO_CRC_CHECK
from broker_core.storage.log_dir_failures import reports_io_errors
from broker_core.storage.log_flusher import LogFlusher
from broker_core.storage.segment import LogSegment
from broker_core.storage.segments import LogSegments
from spate.records.errors import CorruptRecordError


class SegmentReplacement:
    """Compaction's entry into one ``LocalLog``."""

    # The log's state, set by ``LocalLog.__init__``, and its methods.
    _segments: LogSegments
    _flusher: LogFlusher
    _check_open: Callable[[], None]
    _new_segment: Callable[[int], LogSegment]
    _remove_segments: Callable[[list[LogSegment]], None]

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
        segment = self._new_segment(base_offset)
        try:
            segment.load()
        except (CorruptIndexError, CorruptRecordError):
            segment.recover(crc_from_offset=NO_CRC_CHECK)
            segment.on_become_inactive()
        segment.release_indexes()
        return segment
