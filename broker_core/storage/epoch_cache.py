"""Leader-epoch cache: the offset at which each leader epoch started writing.

Followers and consumers ask the leader "where did epoch E end?"
(OffsetForLeaderEpoch) to find where their copy of the log diverged; this
cache answers from entries ``(epoch, start_offset)`` in which both epochs and
start offsets strictly increase.

File ``leader-epoch-checkpoint`` in the partition directory, Kafka's text
checkpoint format (UTF-8, one item per line, ``\\n`` line ends)::

    0                      version
    2                      number of entries
    0 0                    epoch start_offset
    3 1200

Crash behaviour: every change is written to ``leader-epoch-checkpoint.tmp``
and renamed over the checkpoint, so a crash leaves the old or the new file
whole. Truncations are fsynced at once. A new entry (``assign``, on every
leader change and in the append path) is not: like Kafka, the cache is made
durable by :meth:`LeaderEpochFileCache.sync`, which the log runs before every
flush, so no flushed batch depends on an entry a power failure could lose. An
entry assigned with ``write=False`` is not even written until the next write
or flush: appends assign so (after a crash, the batches above the recovery
point assign their epochs again), as does a leader's epoch on a log without
data (no data depends on it, and the next leader election assigns it again). A checkpoint that does not parse raises ``CorruptCheckpointError``
naming the file; nothing is guessed. Entries read back pass through
``assign`` again, so a file with conflicting entries loads in a consistent
state. An empty (0-byte) file means no entries.

Not thread-safe: the partition's single writer owns it.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from broker_core.storage.checkpoint import CHECKPOINT_VERSION, CheckpointFile
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import LEADER_EPOCH_CHECKPOINT
from broker_core.storage.fs import fsync_directory, fsync_file

logger = logging.getLogger(__name__)

def _as_path(directory: Path | str) -> Path:
    # Path(path) parses again: thousands of partitions open at start-up.
    return directory if isinstance(directory, Path) else Path(directory)


class _Unread:
    """The checkpoint was not read beforehand."""


_UNREAD = _Unread()

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

_INTEGER = re.compile(r"-?[0-9]+")


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """Leader ``epoch`` wrote its first batch at ``start_offset``."""

    epoch: int
    start_offset: int


def _checkpoint(path: Path) -> CheckpointFile[EpochEntry]:
    return CheckpointFile(
        path,
        version=CHECKPOINT_VERSION,
        format_entry=lambda e: f"{e.epoch} {e.start_offset}",
        parse_fields=_parse_entry,
        fields_per_entry=2,
    )


def _parse_entry(fields: list[str]) -> EpochEntry:
    epoch, start_offset = (_strict_int(field) for field in fields)
    if epoch < 0 or start_offset < 0:
        raise ValueError(f"negative epoch or offset in {' '.join(fields)!r}")
    return EpochEntry(epoch, start_offset)


def _strict_int(text: str) -> int:
    # int() would also accept "+1", "1_000" and non-ASCII digits; the format has none of them.
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"malformed number {text!r}")
    return int(text)


def read_checkpoint(path: Path) -> list[EpochEntry]:
    """Parse a checkpoint file; a missing or empty file holds no entries."""
    try:
        if path.stat().st_size == 0:
            return []
    except FileNotFoundError:
        return []
    return _checkpoint(path).read()


def write_checkpoint(path: Path, entries: list[EpochEntry], *, sync: bool = True, sync_directory: bool = True) -> None:
    """Replace the checkpoint atomically (temp file, fsync, rename, fsync of the directory; no fsyncs
    unless ``sync``, no directory fsync unless ``sync_directory``)."""
    _checkpoint(path).write(entries, sync=sync, sync_directory=sync_directory)


class LeaderEpochFileCache:
    """The epoch entries of one partition, persisted on every change."""

    def __init__(self, partition_dir: Path, *, checkpoint_text: str | None | _Unread = _UNREAD) -> None:
        """Read the partition's checkpoint, or parse ``checkpoint_text`` read already (None: no file)."""
        self._path = _as_path(partition_dir) / LEADER_EPOCH_CHECKPOINT
        self._entries: list[EpochEntry] = []
        # Written since the last fsync, or not written at all (see ``sync``).
        self._unsynced = False
        self._unwritten = False
        if checkpoint_text is _UNREAD:
            entries = read_checkpoint(self._path)
        else:
            entries = [] if not checkpoint_text else _checkpoint(self._path).parse(checkpoint_text)
        for entry in entries:
            self._assign(entry)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_entry(self) -> EpochEntry | None:
        return self._entries[-1] if self._entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    def assign(self, epoch: int, start_offset: int, *, write: bool = True) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; return whether anything changed.

        The file is rewritten (not fsynced) when anything changed, or left for
        the next ``assign`` or ``sync`` when ``write`` is false.

        Called for every appended batch, so the common call (the latest epoch
        again, at a later offset) changes nothing. The latest epoch at an
        earlier offset moves its start back. Any other entry replaces every
        entry whose epoch or start offset is not below its own, keeping the
        cache consistent with the log just appended to (a warning is logged
        when that drops data-bearing entries).
        """
        changed = self._assign(EpochEntry(epoch, start_offset))
        if changed and not write:
            self._unwritten = True
        elif write and (changed or self._unwritten):
            self._flush(sync=False)
        return changed

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"invalid leader epoch entry {entry}")
        latest = self.latest_entry
        if latest is not None and entry.epoch == latest.epoch and entry.start_offset >= latest.start_offset:
            return False
        removed = []
        while self._entries and (
            self._entries[-1].epoch >= entry.epoch or self._entries[-1].start_offset >= entry.start_offset
        ):
            removed.append(self._entries.pop())
        # Replacing one entry that started at the same offset only means no data was written in it.
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            logger.warning(
                "leader epoch entry %s in %s replaced conflicting entries %s", entry, self._path, removed[::-1]
            )
        self._entries.append(entry)
        return True

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end_offset)`` as OffsetForLeaderEpoch answers it.

        * the latest epoch: ``(requested_epoch, log_end_offset)``;
        * an epoch with a later one cached: the largest cached epoch at or
          below it, and the start offset of the first cached epoch above it;
        * an epoch below every cached one: ``(requested_epoch, start of the
          first cached epoch)``, because older data is gone and the caller
          must truncate to where this log starts (Kafka's current answer);
        * ``UNDEFINED_EPOCH``, an epoch above the latest, or an empty cache:
          ``(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)``.
        """
        undefined = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        if requested_epoch == UNDEFINED_EPOCH or not self._entries:
            return undefined
        if requested_epoch == self._entries[-1].epoch:
            return requested_epoch, log_end_offset
        higher = bisect.bisect_right(self._entries, requested_epoch, key=lambda e: e.epoch)
        if higher == len(self._entries):
            return undefined
        next_start = self._entries[higher].start_offset
        if higher == 0:
            return requested_epoch, next_start
        return self._entries[higher - 1].epoch, next_start

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch that wrote ``offset``: the last entry starting at or below it."""
        index = bisect.bisect_right(self._entries, offset, key=lambda e: e.start_offset)
        return self._entries[index - 1].epoch if index else None

    def truncate_from_end(self, end_offset: int) -> None:
        """Drop entries starting at or after ``end_offset`` (the log was truncated there)."""
        if end_offset < 0:
            return
        keep = bisect.bisect_left(self._entries, end_offset, key=lambda e: e.start_offset)
        if keep < len(self._entries):
            del self._entries[keep:]
            self._flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log now starts at ``start_offset``: the epoch holding it starts there.

        Entries starting at or below ``start_offset`` collapse into one, the
        latest of them, moved to ``start_offset``; later entries stay.
        """
        covered = bisect.bisect_right(self._entries, start_offset, key=lambda e: e.start_offset)
        if covered == 0:
            return
        first = EpochEntry(self._entries[covered - 1].epoch, start_offset)
        self._entries[:covered] = [first]
        self._flush()

    def clear_and_flush(self) -> None:
        """Forget every entry and persist the empty cache."""
        self._entries.clear()
        self._flush()

    @property
    def unsynced(self) -> bool:
        """Whether the file misses entries on disk: not written yet, or not fsynced since."""
        return self._unsynced or self._unwritten

    def sync(self, *, sync_directory: bool = True) -> bool:
        """Write and fsync the checkpoint and its directory if it changed since (no-op otherwise).

        With ``sync_directory`` false the directory is left to the caller (the
        log's flush fsyncs it once for every file it changed); returns whether
        it needs that fsync. Raises ``LogDirError`` when a write or an fsync fails.
        """
        if self._unwritten:
            self._flush(sync_directory=sync_directory)
            return not sync_directory
        if not self._unsynced:
            return False
        try:
            fsync_file(self._path)
            if sync_directory:
                fsync_directory(self._path.parent)
        except OSError as exc:
            raise LogDirError(self._path, f"cannot sync checkpoint: {exc.strerror or exc}") from exc
        self._unsynced = False
        return not sync_directory

    def _flush(self, *, sync: bool = True, sync_directory: bool = True) -> None:
        write_checkpoint(self._path, self._entries, sync=sync, sync_directory=sync_directory)
        self._unwritten = False
        self._unsynced = not sync
