"""Each log dir's ``replication-offset-checkpoint``: the high watermarks of the partitions it holds.

A partition's high watermark lives in memory; after a restart it would
otherwise be unknown, and taking the log end instead would show consumers
records no other replica may hold (a leader that crashed before its followers
caught up). So the broker writes every hosted partition's high watermark
periodically and at shutdown, as Kafka does, and a reopened partition starts
from ``min(checkpointed high watermark, log end offset)`` (0 when none was
written); from there the leader moves it as the ISR confirms, a follower
takes it from its leader.

The file is Kafka's offset checkpoint format (written atomically); an
unreadable one is reported and treated as empty, which only delays what
consumers see until the ISR confirms it again. Writing fsyncs, which can take
long on a busy disk, so the periodic write runs on a thread of its own (the
entries are taken on the event loop first); a lock keeps writers of the same
files one at a time.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.errors import LogDirError, StorageError
from broker_core.storage.files import REPLICATION_OFFSET_CHECKPOINT
from broker_core.storage.log_dir_failures import LogDirFailureChannel
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


class HighWatermarkCheckpoints:
    def __init__(self, log_dirs: Iterable[Path], failures: LogDirFailureChannel | None = None) -> None:
        self._failures = failures
        self._files = {Path(d): OffsetCheckpointFile(Path(d) / REPLICATION_OFFSET_CHECKPOINT) for d in log_dirs}
        self._saved: dict[TopicPartition, int] = {}
        self._writing = threading.Lock()
        for log_dir, checkpoint in self._files.items():
            try:
                self._saved.update(checkpoint.read())
            except (StorageError, OSError) as exc:
                logger.error("ignoring the high watermarks in %s: %s", checkpoint.path, exc)

    def initial(self, tp: TopicPartition, log_end_offset: int) -> int:
        """Where a reopened partition's high watermark starts."""
        return min(self._saved.get(tp, 0), log_end_offset)

    def write(self, high_watermarks: Iterable[tuple[Path, TopicPartition, int]]) -> None:
        """Rewrite every log dir's file from ``(partition dir, partition, high watermark)`` entries."""
        # Keyed by text: a Path's parent and hash cost microseconds, which count at thousands of partitions.
        by_dir: dict[str, dict[TopicPartition, int]] = {str(log_dir): {} for log_dir in self._files}
        for partition_dir, tp, high_watermark in high_watermarks:
            by_dir.setdefault(os.path.dirname(partition_dir), {})[tp] = high_watermark
        with self._writing:
            self._write_files(by_dir)

    def _write_files(self, by_dir: dict[str, dict[TopicPartition, int]]) -> None:
        for text, entries in by_dir.items():
            log_dir = Path(text)
            if self._failures is not None and self._failures.is_offline(log_dir):
                continue
            checkpoint = self._files.get(log_dir) or OffsetCheckpointFile(log_dir / REPLICATION_OFFSET_CHECKPOINT)
            try:
                checkpoint.write(entries)
            except LogDirError as exc:
                if self._failures is None:
                    raise
                self._failures.report(log_dir, exc)
