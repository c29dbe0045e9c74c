"""``archive-offset-checkpoint``: how far each archiving log of a log dir is copied to its Delta archive.

One file per log dir, in the layout of the other offset checkpoints (version
0, a count, ``topic partition offset`` lines), replaced atomically. The
offset of a partition is the archive job's word that every record below it
is in the topic's Delta table (``spate.archive.path``); retention deletes a
segment of an archiving topic only when its successor starts at or below
that offset.

An entry only ever grows: the archive cannot forget records. A lost or
unreadable file makes retention hold everything above the log start offset
until the next archive run reports again, which fills disk but never loses
a record. Every replica keeps its own file: the archive job reports to each
replica of a partition, and a follower without an entry still follows its
leader's log start offset, which the leader moves only past archived data.

Used from the thread that owns the logs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import TopicPartition

ARCHIVE_OFFSET_CHECKPOINT = "archive-offset-checkpoint"

_log = logging.getLogger(__name__)


class ArchiveCheckpoints:
    """The archived offsets of every log dir, in memory and on disk."""

    def __init__(self, log_dirs: Iterable[Path]) -> None:
        self._offsets: dict[Path, dict[TopicPartition, int]] = {}
        for log_dir in log_dirs:
            try:
                self._offsets[log_dir] = OffsetCheckpointFile(log_dir / ARCHIVE_OFFSET_CHECKPOINT).read()
            except LogDirError as exc:
                _log.error("%s unreadable, so retention keeps every unarchived segment until the archive job "
                           "reports again: %s", ARCHIVE_OFFSET_CHECKPOINT, exc)
                self._offsets[log_dir] = {}

    def get(self, log_dir: Path, tp: TopicPartition) -> int | None:
        """The partition's archived offset, or None when no archive run reported it here."""
        return self._offsets.get(log_dir, {}).get(tp)

    def update(self, log_dir: Path, tp: TopicPartition, offset: int, *, live: Iterable[TopicPartition]) -> int:
        """Record that ``tp`` is archived below ``offset``; return the recorded (never smaller) offset.

        The file is rewritten only when the offset grows; entries of
        partitions not in ``live`` (deleted meanwhile) are dropped then.
        """
        if offset < 0:
            raise ValueError(f"an archived offset is not negative, not {offset}")
        current = self.get(log_dir, tp)
        if current is not None and current >= offset:
            return current
        kept = set(live)
        offsets = {p: o for p, o in self._offsets.get(log_dir, {}).items() if p in kept}
        offsets[tp] = offset
        OffsetCheckpointFile(log_dir / ARCHIVE_OFFSET_CHECKPOINT).write(offsets)
        self._offsets[log_dir] = offsets
        return offset

    def forget(self, log_dir: Path, tp: TopicPartition) -> None:
        """Drop a deleted partition's entry (a topic created again under its name starts unarchived)."""
        offsets = self._offsets.get(log_dir, {})
        if tp not in offsets:
            return
        kept = {p: o for p, o in offsets.items() if p != tp}
        OffsetCheckpointFile(log_dir / ARCHIVE_OFFSET_CHECKPOINT).write(kept)
        self._offsets[log_dir] = kept
