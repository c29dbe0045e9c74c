"""``cleaner-offset-checkpoint``: how far each compacted log of a log dir is clean.

One file per log dir, in the layout of the other offset checkpoints (version
0, a count, ``topic partition offset`` lines), replaced atomically. The
offset of a partition is where its dirty part starts: everything below was
cleaned. A lost or stale entry only makes the cleaner redo work (cleaning is
idempotent); an entry below the log start offset counts as the log start.

Kept in memory by the cleaner and written after every cleaning pass; used
from the thread that owns the logs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import TopicPartition

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"

_log = logging.getLogger(__name__)


class CleanerCheckpoints:
    """The cleaner checkpoints of every log dir."""

    def __init__(self, log_dirs: Iterable[Path]) -> None:
        self._offsets: dict[Path, dict[TopicPartition, int]] = {}
        for log_dir in log_dirs:
            try:
                self._offsets[log_dir] = OffsetCheckpointFile(log_dir / CLEANER_OFFSET_CHECKPOINT).read()
            except LogDirError as exc:
                _log.warning("starting %s afresh: %s", CLEANER_OFFSET_CHECKPOINT, exc)
                self._offsets[log_dir] = {}

    def get(self, log_dir: Path, tp: TopicPartition) -> int:
        """Where the partition's dirty part starts (0: nothing was cleaned)."""
        return self._offsets.get(log_dir, {}).get(tp, 0)

    def update(self, log_dir: Path, tp: TopicPartition, offset: int, *, live: Iterable[TopicPartition]) -> None:
        """Record that ``tp`` is clean up to ``offset`` and rewrite the log dir's file.

        Entries of partitions not in ``live`` (deleted meanwhile) are dropped.
        """
        kept = set(live)
        offsets = {p: o for p, o in self._offsets.get(log_dir, {}).items() if p in kept}
        offsets[tp] = offset
        self._offsets[log_dir] = offsets
        OffsetCheckpointFile(log_dir / CLEANER_OFFSET_CHECKPOINT).write(offsets)
