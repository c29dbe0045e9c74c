"""One partition's log with the state that gives its bytes meaning (Kafka's ``UnifiedLog``).

It holds the partition's :class:`LocalLog` (segments, offsets, reads), its
:class:`ProducerStateManager` (idempotence, fencing, open transactions) and
its :class:`LeaderEpochFileCache` (where each leader epoch started), and keeps
the three consistent: a batch is in the log exactly when producer state
reflects it.

A produce request enters storage once, through ``append_as_leader``:

1. validate: framing, ``max.message.bytes`` and the CRC of every batch (the
   one pass over the bytes), control batches refused from clients, offsets
   assigned from the log end and the leader epoch stamped, all into a
   private copy (``validate_append``); the headers found are the ones every
   later step uses;
2. stage producer state for every batch that carries a producer id, before
   anything is written, so a refused batch leaves log and state untouched;
3. answer a retry an idempotent producer already wrote with its original
   offsets, writing nothing;
4. append to the local log (which rolls first when needed);
5. complete producer state batch by batch, indexing each transaction an
   abort marker closes in the aborted-transaction index;
6. record the leader epoch's start offset in the epoch cache.

A follower's append (``append_as_follower``) runs the same steps with the
leader's offsets, epochs and timestamps kept (``assign_offsets=False``),
producer state checked as ``REPLICATION`` and the epoch cache extended from
each batch's partitionLeaderEpoch; ``truncate_to`` takes a diverged follower
back to where it agrees with its leader, producer state and epochs included.

Opening: producer state is loaded from its newest snapshot and the log after
it is replayed through the same staging (``rebuild_from``); abort markers met
on the way re-add their aborted-transaction index entries (those past the
replay start are dropped first, so none is doubled), so entries a crash lost
come back. When the loader discarded a corrupt aborted-transaction index
below the snapshot, the whole log is replayed, as a snapshot cannot tell
which transactions aborted. Before that, batches above the recovery point
whose leader epoch is newer than the epoch cache's latest entry add their
epochs to it: an entry that appends (as leader or follower) or this recovery
add is written and fsynced only before the log's next flush, so a crash may
keep such batches and lose their entry (Kafka's recovery assigns epochs from
recovered batches the same way). The first append of each of thousands of
partitions thus creates no checkpoint file on the produce path.

The log start offset, retention and flushing stay with the local log (the log
manager drives them); the high watermark and what a fetch may see are the
partition's. Not thread-safe: the partition's single writer calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from broker_core.storage.config import LogConfig
from broker_core.storage.epoch_cache import LeaderEpochFileCache
from broker_core.storage.errors import LogDirError
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.local_log import Clock, LocalLog
from broker_core.storage.log_dir_failures import reports_io_errors
from broker_core.storage.log_validator import ValidatedAppend, validate_append
from broker_core.storage.partition_files import PartitionFiles
from broker_core.storage.producer_state import (
    AppendOrigin,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerStateManager,
)
from broker_core.storage.recovered_batches import RecoveredBatches, control_marker
from broker_core.storage.txn_index import AbortedTxn
from spate.records.batch import BatchHeader, iter_batches
from spate.records.control import ControlType, build_control_batch
from spate.records.errors import CorruptRecordError
from spate.records.reader import decode_batch

# Producer-state replay reads the log in chunks of this size.
REPLAY_READ_BYTES = 8 * 1024 * 1024

_Staged = list[ProducerAppendInfo | DuplicateBatch | None]


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append's batches landed (for a retry: where they had landed).

    ``log_append_time`` is the broker time stamped into the batches on a
    LogAppendTime topic, else -1; ``duplicate`` marks a retry answered
    without writing.
    """

    base_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    duplicate: bool = False


class UnifiedLog:
    """The local log, producer state and leader-epoch cache of one partition."""

    def __init__(self, local_log: LocalLog, *, clock: Clock, producer_id_expiration_ms: int) -> None:
        """Wrap ``local_log`` and recover producer state from its directory (see the module docstring)."""
        self._local = local_log
        self._clock = clock
        self._producer_state = ProducerStateManager(
            local_log.directory, clock=clock, max_producer_id_expiration_ms=producer_id_expiration_ms
        )
        # Read while the local log loaded: opening the partition reads no file (``partition_files``).
        files = local_log.take_partition_files()
        if files is not None and files.epoch_checkpoint_read:
            self._epoch_cache = LeaderEpochFileCache(local_log.directory, checkpoint_text=files.epoch_checkpoint)
        else:
            self._epoch_cache = LeaderEpochFileCache(local_log.directory)
        local_log.add_before_flush(lambda: self._epoch_cache.sync(sync_directory=False))
        recovered = files.recovered if files is not None else None
        self._restore_unflushed_epochs(recovered)
        self._recover_producer_state(files, recovered)

    def _io_failed(self, exc: OSError | LogDirError, action: str) -> LogDirError:
        return self._local._io_failed(exc, action)

    def __repr__(self) -> str:
        return f"UnifiedLog({self._local!r})"

    # --------------------------------------------------------------- parts

    @property
    def local_log(self) -> LocalLog:
        return self._local

    @property
    def producer_state(self) -> ProducerStateManager:
        return self._producer_state

    @property
    def epoch_cache(self) -> LeaderEpochFileCache:
        return self._epoch_cache

    @property
    def directory(self) -> Path:
        return self._local.directory

    @property
    def config(self) -> LogConfig:
        return self._local.config

    @property
    def log_start_offset(self) -> int:
        return self._local.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._local.log_end_offset

    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction; ``None`` when none is open."""
        return self._producer_state.first_unstable_offset()

    def update_config(self, config: LogConfig) -> None:
        self._local.update_config(config)

    # --------------------------------------------------------------- append

    @reports_io_errors
    def append_as_leader(
        self, records: bytes | bytearray | memoryview, *, leader_epoch: int, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> AppendResult:
        """Append a produce request's batches as this partition's leader at ``leader_epoch``.

        Nothing is written unless every batch passes. Raises
        ``CorruptRecordError`` (malformed bytes, bad CRC, no batch),
        ``RecordTooLargeError``, ``ControlBatchFromClientError`` (a control
        batch from a client), ``InvalidAppendError``, a
        ``ProducerStateError`` (``OutOfOrderSequenceError``,
        ``InvalidProducerEpochError``, ``InvalidTxnStateError``,
        ``TransactionCoordinatorFencedError``), ``AppendTooLargeError`` or
        ``LogDirError``. A batch a client retries after it was written is
        answered with its original offsets (``AppendResult.duplicate``).
        """
        if len(records) == 0:
            raise CorruptRecordError("produce request carries no record batch")
        now = self._clock()
        validated = validate_append(
            records,
            self._local.config,
            next_offset=self._local.log_end_offset,
            assign_offsets=True,
            leader_epoch=leader_epoch,
            now_ms=now,
            allow_control=origin is not AppendOrigin.CLIENT,
        )
        return self._append(validated, origin=origin, leader_epoch=leader_epoch, now_ms=now)

    @reports_io_errors
    def append_txn_marker(
        self,
        *,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        leader_epoch: int,
        timestamp_ms: int | None = None,
    ) -> AppendResult:
        """Append a COMMIT or ABORT marker for the producer's transaction, as the coordinator.

        A marker for a producer with no open transaction here is written all
        the same and closes nothing. Raises ``InvalidProducerEpochError`` when
        ``producer_epoch`` is older than the producer's epoch here, and
        ``TransactionCoordinatorFencedError`` for an older coordinator epoch.
        """
        batch = build_control_batch(
            ControlType.COMMIT if commit else ControlType.ABORT,
            producer_id,
            producer_epoch,
            coordinator_epoch,
            timestamp=self._clock() if timestamp_ms is None else timestamp_ms,
        )
        return self.append_as_leader(batch, leader_epoch=leader_epoch, origin=AppendOrigin.COORDINATOR)

    @reports_io_errors
    def append_as_follower(self, records: bytes | bytearray | memoryview) -> AppendResult:
        """Append batches fetched from the leader, unchanged: its offsets, epochs and timestamps.

        The batches must start at or after this log's end; producer state is
        brought along (checked as ``REPLICATION``, which accepts what the
        leader accepted), and each batch's partitionLeaderEpoch extends the
        epoch cache, so this replica can answer OffsetForLeaderEpoch and
        take over as leader without losing track of idempotent producers.
        """
        if len(records) == 0:
            raise CorruptRecordError("a fetched chunk carries no record batch")
        now = self._clock()
        validated = validate_append(
            records, self._local.config, next_offset=self._local.log_end_offset, assign_offsets=False, now_ms=now,
        )
        staged = self._stage_producer_state(validated, AppendOrigin.REPLICATION)
        info = self._local.append_validated(validated, now_ms=now)
        self._complete_producer_state(validated.headers, staged, now)
        for header in validated.headers:
            if header.partition_leader_epoch >= 0:
                self._epoch_cache.assign(header.partition_leader_epoch, header.base_offset, write=False)
        return AppendResult(info.first_offset, info.last_offset, -1, self._local.log_start_offset)

    @reports_io_errors
    def truncate_to(self, offset: int) -> bool:
        """Drop everything from ``offset`` on, with the producer state and epochs it implied.

        A follower does this when its log diverged from the new leader's.
        Returns whether anything was removed.
        """
        local = self._local
        if offset >= local.log_end_offset:
            return False
        truncated = local.truncate_to(offset)
        self._epoch_cache.truncate_from_end(local.log_end_offset)
        self._reload_producer_state()
        return truncated

    @reports_io_errors
    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and continue at ``offset`` (a follower far behind a leader's log start)."""
        self._local.truncate_fully_and_start_at(offset)
        self._epoch_cache.clear_and_flush()
        self._producer_state.truncate_fully_and_start_at(offset)

    def _reload_producer_state(self) -> None:
        local, state = self._local, self._producer_state
        replay_from = state.truncate_and_reload(local.log_start_offset, local.log_end_offset)
        if replay_from < local.log_end_offset:
            local.truncate_aborted_txns_from(replay_from)
            state.rebuild_from(self._batches_from(replay_from), on_completed=self._index_if_aborted)
        state.update_map_end_offset(local.log_end_offset)

    def _append(
        self, validated: ValidatedAppend, *, origin: AppendOrigin, leader_epoch: int, now_ms: int
    ) -> AppendResult:
        """Steps 2-6 of an append (module docstring), for batches validated against this log."""
        staged = self._stage_producer_state(validated, origin)
        if len(staged) == 1 and isinstance(staged[0], DuplicateBatch):
            original = staged[0]
            return AppendResult(
                original.first_offset, original.last_offset, -1, self._local.log_start_offset, duplicate=True
            )
        if any(isinstance(info, DuplicateBatch) for info in staged):
            # A duplicate mixed with new batches cannot be answered with one base offset.
            raise OutOfOrderSequenceError("request mixes a retried batch with new ones")
        info = self._local.append_validated(validated, now_ms=now_ms)
        self._complete_producer_state(validated.headers, staged, now_ms)
        # Written with the next flush: until then the batches themselves restore the entry after a crash.
        self._epoch_cache.assign(leader_epoch, info.first_offset, write=False)
        return AppendResult(info.first_offset, info.last_offset, info.log_append_time, self._local.log_start_offset)

    def _stage_producer_state(self, validated: ValidatedAppend, origin: AppendOrigin) -> _Staged:
        """Check every batch with a producer id against producer state; nothing changes yet."""
        staging = self._producer_state.stage_append(origin=origin)
        return [
            staging.prepare(header, _marker_of(validated.data, header)) if header.has_producer_id else None
            for header in validated.headers
        ]

    def _complete_producer_state(self, headers: Sequence[BatchHeader], staged: _Staged, now_ms: int) -> None:
        """Apply the staged batches now that the log holds them, in order."""
        for header, producer_info in zip(headers, staged):
            if isinstance(producer_info, ProducerAppendInfo):
                completed = self._producer_state.complete_append(
                    producer_info, header.base_offset, header.last_offset, now_ms
                )
                if completed is not None:
                    self._index_if_aborted(completed)
        self._producer_state.update_map_end_offset(self._local.log_end_offset)

    def _index_if_aborted(self, completed: CompletedTxn) -> None:
        """Add an aborted transaction to the index, with the LSO now that it has ended.

        Producer state already reflects the marker. The LSO is the log's:
        the oldest transaction still open, else the offset after the marker
        (a high watermark may lag behind the marker on a follower).
        """
        if not completed.is_aborted:
            return
        unstable = self._producer_state.first_unstable_offset()
        stable = completed.last_offset + 1 if unstable is None else min(unstable, completed.last_offset + 1)
        self._local.append_aborted_txn(
            AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset, stable)
        )

    # --------------------------------------------------------------- epochs

    @reports_io_errors
    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Record that ``leader_epoch`` writes from ``start_offset`` on (a no-op when it already does).

        On a log without data the entry is written with the first append (or flush), not now.
        """
        local = self._local
        self._epoch_cache.assign(leader_epoch, start_offset, write=local.log_end_offset > local.log_start_offset)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """``(epoch, end_offset)`` as OffsetForLeaderEpoch answers it (see ``LeaderEpochFileCache``)."""
        return self._epoch_cache.end_offset_for(epoch, self._local.log_end_offset)

    # ----------------------------------------------------------------- read

    def read(
        self, start_offset: int, max_bytes: int, *, max_offset: int | None = None, min_one_batch: bool = True
    ) -> FetchSlice:
        """Whole batches from ``start_offset`` (``LocalLog.read``)."""
        return self._local.read(start_offset, max_bytes, max_offset=max_offset, min_one_batch=min_one_batch)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        return self._local.collect_aborted_transactions(start_offset, upper_bound_offset)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record at or after ``timestamp``.

        The time index finds the batch; the batch is decoded to find the record,
        as clients expect a record offset, not a batch's base offset.
        """
        found = self._local.offset_for_timestamp(timestamp)
        if found is None:
            return None
        batch = decode_batch(self._local.read(found.offset, 1, min_one_batch=True).read_bytes())
        for record in batch.records:
            if record.timestamp >= timestamp and record.offset >= self._local.log_start_offset:
                return record.timestamp, record.offset
        return found.timestamp, found.offset

    def max_timestamp_and_offset(self) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record carrying the log's largest timestamp (ListOffsets -3)."""
        found = self._local.max_timestamp_and_offset()
        if found is None or found.timestamp < 0:
            return None
        return self.offset_for_timestamp(found.timestamp)

    # ---------------------------------------------------------- maintenance

    @reports_io_errors
    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset (DeleteRecords); return the new low watermark."""
        return self._local.delete_records_before(offset)

    @reports_io_errors
    def checkpoint(self) -> None:
        """Flush the log and snapshot producer state at its end (clean shutdown, periodic checkpoint).

        The snapshot is written first and the flush fsyncs the directory once for it, the epoch checkpoint
        and new segments. A crash before the flush may leave a snapshot past the durable log end, which
        loading deletes.
        """
        local = self._local
        if self._producer_state.take_snapshot_leaving_directory_sync(local.log_end_offset):
            local.mark_directory_dirty()
        local.flush()

    @reports_io_errors
    def flush(self) -> None:
        self._local.flush()

    def close(self) -> None:
        """Close the local log; producer state is snapshotted by ``checkpoint``, not here."""
        self._local.close()

    # ------------------------------------------------------------- recovery

    def _restore_unflushed_epochs(self, recovered: RecoveredBatches | None) -> None:
        """Epochs of the batches above the recovery point that the checkpoint lacks, as Kafka's recovery
        assigns them: its new entries are fsynced only before a flush, so a power failure may have lost
        an entry whose data survived. Only epochs above the latest cached one are added, so no entry goes."""
        local = self._local
        if local.recovery_point >= local.log_end_offset:
            return
        start = max(local.recovery_point, local.log_start_offset)
        if recovered is not None and recovered.recovery_point == start:
            # The loader saw these batches: the first of each epoch's run is what can add an entry.
            epoch_starts = recovered.epoch_starts
        else:
            epoch_starts = [(h.partition_leader_epoch, h.base_offset) for h, _ in self._batches_from(start)]
        for epoch, base_offset in epoch_starts:
            latest = self._epoch_cache.latest_epoch
            if epoch > (-1 if latest is None else latest):
                self._epoch_cache.assign(epoch, base_offset, write=False)

    def _recover_producer_state(self, files: PartitionFiles | None, recovered: RecoveredBatches | None) -> None:
        """Load the newest snapshot and replay the log after it (see the module docstring)."""
        local, state = self._local, self._producer_state
        start, end = local.log_start_offset, local.log_end_offset
        replay_from = state.load(start, end, files=files)
        lost_from = local.txn_index_lost_from
        if lost_from is not None and lost_from < replay_from:
            state.forget_state(start)
            replay_from = start
        if replay_from < end:
            local.truncate_aborted_txns_from(replay_from)
            if recovered is not None and recovered.from_offset <= replay_from:
                # What recovery kept; the other batches only move the map end, set below.
                batches: Iterable[tuple[BatchHeader, EndTxnMarker | None]] = recovered.producer_batches
            else:
                batches = self._batches_from(replay_from)
            state.rebuild_from(batches, on_completed=self._index_if_aborted)
        local.forget_lost_txn_index()
        state.update_map_end_offset(end)

    def _batches_from(self, offset: int) -> Iterator[tuple[BatchHeader, EndTxnMarker | None]]:
        """Batches from ``offset`` to the log end, a segment's worth at a time; control batches decoded."""
        end = self._local.log_end_offset
        while offset < end:
            chunk = self._local.read(offset, REPLAY_READ_BYTES).read_bytes()
            if not chunk:
                return
            for header in iter_batches(chunk, check_crc=False):
                yield header, _marker_of(chunk, header)
                offset = header.next_offset


def _marker_of(buf: bytes | bytearray | memoryview, header: BatchHeader) -> EndTxnMarker | None:
    """The decoded marker of a control batch (None for other batches).

    Only control batches are decoded; they are rare and hold one record.
    """
    return control_marker(buf, header, header.position) if header.is_control else None
