"""Segments removed from a log whose files are deleted a little later.

Retention, DeleteRecords and truncation take a segment out of the log at once
(renaming its files with the ``.deleted`` suffix) but keep its file handle
open for ``file.delete.delay.ms``, so a fetch already holding a slice of that
segment can still send it. ``run`` closes and unlinks what is due.

Crash behaviour: files still carrying ``.deleted`` after a crash are removed
by the loader on the next start.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from broker_core.storage.files import FileState
from broker_core.storage.segment import LogSegment


@dataclass(order=True)
class _Pending:
    due_ms: int
    sequence: int
    segment: LogSegment = field(compare=False)


class PendingDeletes:
    """A due-time ordered queue of segments waiting for their files to go."""

    def __init__(self) -> None:
        self._heap: list[_Pending] = []
        self._sequence = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def schedule(self, segment: LogSegment, due_ms: int) -> None:
        heapq.heappush(self._heap, _Pending(due_ms, next(self._sequence), segment))

    def retire(self, segment: LogSegment, due_ms: int | None) -> None:
        """Rename a segment just taken out of its log to ``.deleted`` and delete
        its files at ``due_ms`` (None: at once)."""
        segment.release_indexes()
        segment.rename_to(FileState.DELETED)
        if due_ms is None:
            segment.delete_files()
        else:
            self.schedule(segment, due_ms)

    def next_due_ms(self) -> int | None:
        return self._heap[0].due_ms if self._heap else None

    def run(self, now_ms: int) -> int:
        """Delete every segment due at ``now_ms``; return how many."""
        deleted = 0
        while self._heap and self._heap[0].due_ms <= now_ms:
            heapq.heappop(self._heap).segment.delete_files()
            deleted += 1
        return deleted

    def close_all(self) -> None:
        """Close every pending segment's files and forget them (their directory goes as a whole)."""
        while self._heap:
            heapq.heappop(self._heap).segment.close_handles()

    def run_all(self) -> int:
        """Delete everything now (the log is closing)."""
        deleted = len(self._heap)
        while self._heap:
            heapq.heappop(self._heap).segment.delete_files()
        return deleted
