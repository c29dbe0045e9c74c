"""The small files a partition's state starts from, read while its log loads.

Opening a partition restores its producer state from the newest snapshot
within the log and its leader-epoch cache from ``leader-epoch-checkpoint``.
The loader has listed the directory already, so it reads both files there,
on the log manager's loading threads (where file I/O overlaps), and the
partition later takes them from memory: opening thousands of partitions on
the event loop then touches no file (Kafka, too, loads producer state as part
of loading the log).

What is read is used once, by the first ``UnifiedLog`` over the log, and
only the files that exist at load are read: snapshots and the epoch
checkpoint are written only through that partition, after it took them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from broker_core.storage.files import (
    LEADER_EPOCH_CHECKPOINT,
    is_snapshot_temp_file_name,
    parse_snapshot_file_name,
    snapshot_file_name,
)

if TYPE_CHECKING:
    from broker_core.storage.recovered_batches import RecoveredBatches


@dataclass(frozen=True, slots=True)
class PartitionFiles:
    """The directory's file names, the epoch checkpoint's text (None: no file; ``epoch_checkpoint_read``
    False: not read, the partition reads it) and the newest snapshot in the log's range (by offset; empty
    when there is none or it could not be read)."""

    names: frozenset[str]
    epoch_checkpoint: str | None = None
    epoch_checkpoint_read: bool = True
    # Every snapshot's offset, ascending, and the names of snapshot writes a crash interrupted.
    snapshot_offsets: tuple[int, ...] = ()
    snapshot_temp_files: tuple[str, ...] = ()
    snapshots: dict[int, bytes] = field(default_factory=dict)
    # After a crash: what recovery kept of the batches it validated (``recovered_batches``).
    recovered: RecoveredBatches | None = None


def read_partition_files(
    directory: Path, names: frozenset[str], log_start: int, log_end: int, recovered: RecoveredBatches | None = None
) -> PartitionFiles:
    """Read what ``names`` (the directory's listing) says the partition will start from."""
    # Joined as text: a Path per file costs more than reading it.
    where = os.fspath(directory)
    epoch_text, epoch_read = None, True
    if LEADER_EPOCH_CHECKPOINT in names:
        try:
            epoch_text = _read(os.path.join(where, LEADER_EPOCH_CHECKPOINT)).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            epoch_read = False  # read again when the partition opens, which reports the problem
    offsets = sorted(offset for offset in map(parse_snapshot_file_name, names) if offset is not None)
    temp_files = tuple(name for name in names if is_snapshot_temp_file_name(name))
    in_range = [offset for offset in offsets if log_start <= offset <= log_end]
    snapshots = {}
    if in_range:
        newest = max(in_range)
        try:
            snapshots[newest] = _read(os.path.join(where, snapshot_file_name(newest)))
        except OSError:
            pass  # read again when the partition opens
    return PartitionFiles(names, epoch_text, epoch_read, tuple(offsets), temp_files, snapshots, recovered)


def _read(path: str) -> bytes:
    with open(path, "rb", buffering=0) as f:
        return f.readall()
