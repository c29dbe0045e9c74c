"""One partition as its leader sees it: log, producer state, epochs, watermarks.

The partition is where the produce path's checks meet the log: batch headers
are validated once, producer state (idempotence) is checked for every batch
of a request before any of them is written, and only then does the log append
them. Everything here is synchronous and runs on the broker's event-loop
thread, so a partition has exactly one writer.

With a single replica the high watermark is the log end offset after every
append; replication (ISR, followers) will move it from fetch positions.

Transactions: producer state knows each producer's open transaction, so the
last stable offset (LSO) is the first offset of the oldest open one, capped
by the high watermark. The coordinator ends a transaction with a marker
(``write_txn_marker``); an abort marker also adds an entry to the log's
aborted-transaction index, which read_committed fetches return alongside
data below the LSO so consumers can drop the aborted records. Recovery
replays the log from the producer-state snapshot and re-adds the index
entries of every abort it meets, so entries a crash lost come back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterator

from broker_core.storage.epoch_cache import LeaderEpochFileCache
from broker_core.storage.errors import ControlBatchFromClientError
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.producer_state import (
    AppendOrigin,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerStateManager,
)
from broker_core.storage.txn_index import AbortedTxn
from spate.records.batch import BatchHeader, iter_batches
from spate.records.control import ControlType, build_control_batch, parse_control_record
from spate.records.errors import CorruptRecordError
from spate.records.reader import decode_batch
from spate.structs import IsolationLevel

logger = logging.getLogger(__name__)

# Producer-state replay reads the log in chunks of this size.
REPLAY_READ_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PartitionAppendResult:
    base_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class PartitionRead:
    slice: FetchSlice
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    # read_committed: the aborted transactions overlapping the data; None under read_uncommitted.
    aborted_transactions: list[AbortedTxn] | None = None


class Partition:
    """A partition led by this broker."""

    def __init__(
        self,
        topic: str,
        index: int,
        log,  # broker_core.storage.log.Log
        *,
        leader_epoch: int,
        clock: Callable[[], int],
        producer_id_expiration_ms: int,
    ) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.leader_epoch = leader_epoch
        self._clock = clock
        self.epoch_cache = LeaderEpochFileCache(log.directory)
        self.producer_state = ProducerStateManager(
            log.directory, clock=clock, max_producer_id_expiration_ms=producer_id_expiration_ms
        )
        self._recover_producer_state()
        self.epoch_cache.assign(leader_epoch, log.log_end_offset)
        self.high_watermark = log.log_end_offset

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    # --- state -----------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark."""
        unstable = self.producer_state.first_unstable_offset()
        if unstable is None:
            return self.high_watermark
        return min(unstable, self.high_watermark)

    def _recover_producer_state(self) -> None:
        """Load the newest snapshot and replay the log after it.

        Abort markers met on the way re-add their index entries (those past
        the replay start are dropped first, so none is doubled). When the
        loader discarded a corrupt index below the snapshot, the whole log is
        replayed, as a snapshot cannot tell which transactions aborted.
        """
        start, end = self.log.log_start_offset, self.log.log_end_offset
        replay_from = self.producer_state.load(start, end)
        lost_from = self.log.txn_index_lost_from
        if lost_from is not None and lost_from < replay_from:
            self.producer_state.forget_state(start)
            replay_from = start
        if replay_from < end:
            self.log.truncate_aborted_txns_from(replay_from)
            self.producer_state.rebuild_from(self._batches_from(replay_from), on_completed=self._index_if_aborted)
        self.log.forget_lost_txn_index()
        self.producer_state.update_map_end_offset(end)

    def _batches_from(self, offset: int) -> Iterator[tuple[BatchHeader, EndTxnMarker | None]]:
        """Batches from ``offset`` to the log end, a segment's worth at a time; control batches decoded."""
        end = self.log.log_end_offset
        while offset < end:
            chunk = self.log.read(offset, REPLAY_READ_BYTES).read_bytes()
            if not chunk:
                return
            for header in iter_batches(chunk, check_crc=False):
                yield header, _marker_of(chunk, header)
                offset = header.next_offset

    # --- produce ---------------------------------------------------------------------------

    def append_records(
        self, records: memoryview | bytes, *, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> PartitionAppendResult:
        """Validate, check producer state, append; raise a typed error on any problem.

        Nothing is written unless every batch of the request passes. A retried
        batch an idempotent producer already wrote is answered with its
        original offsets and not written again. Control batches are refused
        from clients (``ControlBatchFromClientError``); ``write_txn_marker``
        writes them.
        """
        # Framing, magic and counts are checked here; the log's append makes
        # the one CRC pass, so producer state is never updated for a batch it refuses.
        headers = list(iter_batches(records, check_crc=False))
        if not headers:
            raise CorruptRecordError("produce request carries no record batch")
        if origin is AppendOrigin.CLIENT:
            for header in headers:
                if header.is_control:
                    raise ControlBatchFromClientError(
                        f"batch at position {header.position} is a control batch; clients may not write markers"
                    )
        staged = self._stage_producer_state(records, headers, origin)
        if len(staged) == 1 and isinstance(staged[0], DuplicateBatch):
            original = staged[0]
            return PartitionAppendResult(
                original.first_offset, original.last_offset, -1, self.log.log_start_offset, duplicate=True
            )
        if any(isinstance(info, DuplicateBatch) for info in staged):
            # A duplicate mixed with new batches cannot be answered with one base offset.
            raise OutOfOrderSequenceError("request mixes a retried batch with new ones")
        info = self.log.append(records, leader_epoch=self.leader_epoch)
        now = self._clock()
        for header, producer_info in zip(info.batches, staged):
            if isinstance(producer_info, ProducerAppendInfo):
                completed = self.producer_state.complete_append(
                    producer_info, header.base_offset, header.last_offset, now
                )
                if completed is not None:
                    self._index_if_aborted(completed)
        self.producer_state.update_map_end_offset(self.log.log_end_offset)
        self.high_watermark = self.log.log_end_offset
        return PartitionAppendResult(
            info.first_offset, info.last_offset, info.log_append_time, self.log.log_start_offset
        )

    def _stage_producer_state(
        self, records: memoryview | bytes, headers: list[BatchHeader], origin: AppendOrigin
    ) -> list[ProducerAppendInfo | DuplicateBatch | None]:
        staging = self.producer_state.stage_append(origin=origin)
        return [staging.prepare(h, _marker_of(records, h)) if h.has_producer_id else None for h in headers]

    def write_txn_marker(
        self,
        *,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        timestamp_ms: int | None = None,
    ) -> int:
        """Append a COMMIT or ABORT marker for the producer's transaction; return its offset.

        A marker for a producer with no open transaction here is written all
        the same and closes nothing. Raises ``InvalidProducerEpochError`` when
        ``producer_epoch`` is older than the producer's epoch here, and
        ``TransactionCoordinatorFencedError`` for an older coordinator epoch.
        The caller wakes fetches waiting on the partition.
        """
        batch = build_control_batch(
            ControlType.COMMIT if commit else ControlType.ABORT,
            producer_id,
            producer_epoch,
            coordinator_epoch,
            timestamp=self._clock() if timestamp_ms is None else timestamp_ms,
        )
        return self.append_records(batch, origin=AppendOrigin.COORDINATOR).base_offset

    def _index_if_aborted(self, completed: CompletedTxn) -> None:
        """Add an aborted transaction to the index, with the LSO now that it has ended.

        Producer state already reflects the marker. The LSO is the log's:
        the oldest transaction still open, else the offset after the marker
        (the high watermark may lag behind the marker on a follower).
        """
        if not completed.is_aborted:
            return
        unstable = self.producer_state.first_unstable_offset()
        stable = completed.last_offset + 1 if unstable is None else min(unstable, completed.last_offset + 1)
        self.log.append_aborted_txn(
            AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset, stable)
        )

    # --- fetch -----------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, *, isolation_level: int, min_one_batch: bool) -> PartitionRead:
        """Whole batches from ``offset`` below the high watermark (or the LSO).

        Under read_committed the result also lists the aborted transactions
        the returned batches overlap: those aborted at or after ``offset``
        that began before the offset following the last returned batch.
        """
        high_watermark = self.high_watermark
        stable = self.last_stable_offset
        if isolation_level != IsolationLevel.READ_COMMITTED:
            fetched = self.log.read(offset, max_bytes, max_offset=high_watermark, min_one_batch=min_one_batch)
            return PartitionRead(fetched, high_watermark, stable, self.log.log_start_offset)
        fetched = self.log.read(offset, max_bytes, max_offset=stable, min_one_batch=min_one_batch)
        aborted: list[AbortedTxn] = []
        if fetched.size:
            aborted = self.log.collect_aborted_transactions(offset, fetched.last_offset + 1)
        return PartitionRead(fetched, high_watermark, stable, self.log.log_start_offset, aborted)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record at or after ``timestamp``.

        The time index finds the batch; the batch is decoded to find the record,
        as clients expect a record offset, not a batch's base offset.
        """
        found = self.log.offset_for_timestamp(timestamp)
        if found is None:
            return None
        batch = decode_batch(self.log.read(found.offset, 1, min_one_batch=True).read_bytes())
        for record in batch.records:
            if record.timestamp >= timestamp and record.offset >= self.log.log_start_offset:
                return record.timestamp, record.offset
        return found.timestamp, found.offset

    # --- admin -----------------------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset (DeleteRecords); returns the new low watermark."""
        self.log.maybe_increment_log_start_offset(offset)
        return self.log.log_start_offset

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epoch_cache.end_offset_for(epoch, self.log.log_end_offset)

    def checkpoint(self) -> None:
        """Snapshot producer state at the log end (clean shutdown, segment roll)."""
        self.log.flush()
        self.producer_state.take_snapshot(self.log.log_end_offset)


def _marker_of(buf: memoryview | bytes, header: BatchHeader) -> EndTxnMarker | None:
    """The decoded marker of a control batch (None for other batches).

    Only control batches are decoded; they are rare and hold one record.
    """
    if not header.is_control:
        return None
    batch = decode_batch(buf, header.position)
    if len(batch.records) != 1:
        raise CorruptRecordError(
            f"control batch at offset {header.base_offset} holds {len(batch.records)} records, not 1"
        )
    control_type, coordinator_epoch = parse_control_record(batch.records[0])
    return EndTxnMarker(control_type, coordinator_epoch)
