"""The producer state of one partition: the committed entries, appends, replay and snapshots."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from broker_core.storage.files import snapshot_file_name
from broker_core.storage.producer_state.append import ProducerAppendStaging
from broker_core.storage.producer_state.entry import (
    AppendOrigin,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    ProducerAppendInfo,
    ProducerStateEntry,
)
from broker_core.storage.producer_state.errors import CorruptSnapshotError
from broker_core.storage.producer_state.snapshot import (
    decode_snapshot,
    delete_snapshot,
    read_snapshot,
    remove_temp_files,
    snapshot_offsets,
    snapshot_path,
    write_snapshot,
)
from spate.records.batch import BatchHeader

if TYPE_CHECKING:
    from broker_core.storage.partition_files import PartitionFiles

logger = logging.getLogger(__name__)

SNAPSHOTS_TO_KEEP = 2

Clock = Callable[[], int]
"""Wall-clock milliseconds since the epoch."""


class ProducerStateManager:
    """Producer state of one partition, with snapshots in its directory.

    ``map_end_offset`` is the offset up to which (exclusive) the state reflects
    the log. A snapshot named ``N.snapshot`` holds the state as of offset N:
    loading it and replaying the batches from N onwards rebuilds the state.

    Crash behaviour: snapshots are written atomically (see :mod:`.snapshot`),
    so a crash leaves whole snapshots and at most a stray ``.snapshot.tmp``
    (removed on ``load``). A snapshot damaged later is detected by its CRC;
    ``load`` skips it for the next older one and recovery replays more of the
    log.

    Not thread-safe: a partition has one writer, which owns its manager.
    """

    def __init__(self, partition_dir: Path, *, clock: Clock, max_producer_id_expiration_ms: int) -> None:
        if max_producer_id_expiration_ms < 0:
            raise ValueError(f"max_producer_id_expiration_ms must be >= 0, got {max_producer_id_expiration_ms}")
        # Path(path) parses again: thousands of partitions open at start-up.
        self._dir = partition_dir if isinstance(partition_dir, Path) else Path(partition_dir)
        self._clock = clock
        self._expiration_ms = max_producer_id_expiration_ms
        self._producers: dict[int, ProducerStateEntry] = {}
        self._map_end_offset = 0

    # -- reading

    @property
    def partition_dir(self) -> Path:
        return self._dir

    @property
    def map_end_offset(self) -> int:
        return self._map_end_offset

    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        """A read-only view of every producer with state here."""
        return MappingProxyType(self._producers)

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction; ``None`` when none is open."""
        open_txns = (e.current_txn_first_offset for e in self._producers.values())
        return min((offset for offset in open_txns if offset is not None), default=None)

    # -- appending

    def stage_append(
        self, *, origin: AppendOrigin = AppendOrigin.CLIENT, is_from_client: bool | None = None
    ) -> ProducerAppendStaging:
        """Start validating the batches of one append (see ``ProducerAppendStaging``).

        ``is_from_client`` is the older spelling of ``origin`` (True: CLIENT,
        False: REPLICATION) and wins when given.
        """
        if is_from_client is not None:
            origin = AppendOrigin.of(is_from_client)
        return ProducerAppendStaging(self._producers, origin=origin)

    def prepare_append(
        self,
        header: BatchHeader,
        marker: EndTxnMarker | None = None,
        *,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        is_from_client: bool | None = None,
    ) -> ProducerAppendInfo | DuplicateBatch:
        """Validate a single-batch append against committed state."""
        return self.stage_append(origin=origin, is_from_client=is_from_client).prepare(header, marker)

    def complete_append(
        self, info: ProducerAppendInfo, first_offset: int, last_offset: int, append_timestamp: int
    ) -> CompletedTxn | None:
        """Record a prepared batch once the log holds it at ``first_offset..last_offset``.

        ``append_timestamp`` is the time that ages the producer towards
        expiry and is returned to retries: the broker's append time, or the
        batch's max timestamp on replay. Batches must be completed in the
        order they were prepared. A marker returns the transaction it closed,
        or None when the producer had none open here.
        """
        if last_offset - first_offset != info.last_offset_delta:
            raise ValueError(
                f"producer {info.producer_id}: offsets {first_offset}..{last_offset} do not span the "
                f"batch's lastOffsetDelta {info.last_offset_delta}"
            )
        if last_offset < self._map_end_offset:
            raise ValueError(
                f"producer {info.producer_id}: batch ending at offset {last_offset} is already reflected "
                f"in producer state up to {self._map_end_offset}"
            )
        entry = self._producers.get(info.producer_id)
        if entry is None:
            entry = ProducerStateEntry(info.producer_id)
        completed = None
        if info.marker is not None and entry.current_txn_first_offset is not None:
            completed = CompletedTxn(
                info.producer_id, entry.current_txn_first_offset, last_offset, info.marker.is_abort
            )
        self._producers[info.producer_id] = entry.after_append(info, first_offset, last_offset, append_timestamp)
        self._map_end_offset = last_offset + 1
        return completed

    def update_map_end_offset(self, offset: int) -> None:
        """Note that the log reached ``offset`` through batches without producer ids."""
        self._map_end_offset = max(self._map_end_offset, offset)

    def rebuild_from(
        self,
        batches: Iterable[tuple[BatchHeader, EndTxnMarker | None]],
        *,
        on_completed: Callable[[CompletedTxn], None] | None = None,
    ) -> None:
        """Replay batches in log order through the normal append path.

        Each batch is its header and, for a control batch, its decoded
        marker. Batches ending below ``map_end_offset`` are already reflected
        and are skipped, so callers may pass whole segments.
        ``on_completed`` sees each transaction a replayed marker closes, right
        after the marker is applied.
        """
        for header, marker in batches:
            if header.last_offset < self._map_end_offset:
                continue
            if header.has_producer_id:
                info = self.prepare_append(header, marker, origin=AppendOrigin.REPLICATION)
                if not isinstance(info, ProducerAppendInfo):  # replay never looks for duplicates
                    raise RuntimeError(f"replay of offset {header.base_offset} returned {info!r}")
                completed = self.complete_append(info, header.base_offset, header.last_offset, header.max_timestamp)
                if completed is not None and on_completed is not None:
                    on_completed(completed)
            self.update_map_end_offset(header.next_offset)

    def remove_expired_producers(self, now: int) -> None:
        """Forget producers idle for the expiration time; open transactions keep theirs."""
        for pid in [pid for pid, e in self._producers.items() if self._is_expired(e, now)]:
            del self._producers[pid]

    def _is_expired(self, entry: ProducerStateEntry, now: int) -> bool:
        return entry.current_txn_first_offset is None and now - entry.last_timestamp >= self._expiration_ms

    # -- snapshots

    def snapshot_offsets(self) -> list[int]:
        """Offsets of the snapshot files in the partition directory, ascending."""
        return snapshot_offsets(self._dir)

    def take_snapshot(self, offset: int) -> Path:
        """Write the state as of ``offset`` and keep only the newest snapshots.

        ``offset`` is normally the log end offset; it may not be below
        ``map_end_offset``, or replay from it would apply batches twice. As in
        Kafka, nothing is written when a snapshot at ``offset`` exists already
        (no batch came since; a clean shutdown after a restart rewrites
        nothing), nor at offset 0 without producers (there is nothing to
        replay either way).
        """
        if offset < self._map_end_offset:
            raise ValueError(
                f"snapshot offset {offset} is below the producer state's end offset {self._map_end_offset}"
            )
        path = snapshot_path(self._dir, offset)
        self._write_snapshot(offset, sync_directory=True)
        return path

    def take_snapshot_leaving_directory_sync(self, offset: int) -> bool:
        """``take_snapshot`` without the fsync of the directory; returns whether the caller must fsync it
        (a snapshot was written) to make the snapshot durable."""
        return self._write_snapshot(offset, sync_directory=False)

    def _write_snapshot(self, offset: int, *, sync_directory: bool) -> bool:
        if snapshot_path(self._dir, offset).exists() or (offset == 0 and not self._producers):
            self._map_end_offset = offset
            return False
        write_snapshot(self._dir, offset, self._producers.values(), sync_directory=sync_directory)
        self._map_end_offset = offset
        for old in self.snapshot_offsets()[:-SNAPSHOTS_TO_KEEP]:
            self._delete_snapshot(old)
        return True

    def load(self, log_start_offset: int, log_end_offset: int, *, files: PartitionFiles | None = None) -> int:
        """Replace the in-memory state with the newest usable snapshot.

        ``files`` is what loading the log found and read in the partition
        directory (``partition_files``); without it the directory is listed.
        Snapshots outside ``[log_start_offset, log_end_offset]`` describe data
        that is gone and are deleted, as are corrupt ones (with a warning).
        Producers already expired by the clock are dropped. Returns the offset
        from which the caller must replay the log into ``rebuild_from``.
        """
        if log_start_offset > log_end_offset:
            raise ValueError(f"log start offset {log_start_offset} is past log end offset {log_end_offset}")
        self._producers.clear()
        if files is None:
            remove_temp_files(self._dir)
            offsets, contents = snapshot_offsets(self._dir), {}
        else:
            for name in files.snapshot_temp_files:
                (self._dir / name).unlink(missing_ok=True)
            offsets, contents = list(files.snapshot_offsets), files.snapshots
        for offset in offsets:
            if offset < log_start_offset or offset > log_end_offset:
                self._delete_snapshot(offset)
        for offset in reversed([o for o in offsets if log_start_offset <= o <= log_end_offset]):
            try:
                data = contents.get(offset)
                if data is None:
                    entries = read_snapshot(self._dir, offset)
                else:
                    entries = decode_snapshot(data, source=os.path.join(self._dir, snapshot_file_name(offset)))
            except CorruptSnapshotError as exc:
                logger.warning("%s; deleting it and falling back to an older snapshot", exc)
                self._delete_snapshot(offset)
                continue
            now = self._clock()
            self._producers.update((e.producer_id, e) for e in entries if not self._is_expired(e, now))
            self._map_end_offset = offset
            return offset
        self._map_end_offset = log_start_offset
        return log_start_offset

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int) -> int:
        """Fit the state to a log now spanning ``log_start_offset..log_end_offset``.

        If the state already ends at ``log_end_offset`` it is kept; otherwise
        it is reloaded from a snapshot. Returns the offset to replay from
        (``log_end_offset`` when nothing needs replaying).
        """
        if log_start_offset > log_end_offset:
            raise ValueError(f"log start offset {log_start_offset} is past log end offset {log_end_offset}")
        self._delete_snapshots_outside(log_start_offset, log_end_offset)
        if log_end_offset != self._map_end_offset:
            return self.load(log_start_offset, log_end_offset)
        return log_end_offset

    def forget_state(self, map_end_offset: int) -> None:
        """Drop the in-memory state (snapshots stay) so a replay can start at ``map_end_offset``."""
        self._producers.clear()
        self._map_end_offset = map_end_offset

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and snapshot; the log now starts empty at ``offset``."""
        self._producers.clear()
        for old in self.snapshot_offsets():
            self._delete_snapshot(old)
        self._map_end_offset = offset

    def _delete_snapshots_outside(self, log_start_offset: int, log_end_offset: int) -> None:
        for offset in self.snapshot_offsets():
            if offset < log_start_offset or offset > log_end_offset:
                self._delete_snapshot(offset)

    def _delete_snapshot(self, offset: int) -> None:
        delete_snapshot(self._dir, offset)
