"""One partition as its leader sees it: the leader epoch, the high watermark and what fetches may see.

Storage is the partition's :class:`UnifiedLog`, and a produce request enters
it once (``UnifiedLog.append_as_leader``: validation, producer state,
the local append, aborted transactions, leader epochs). The partition adds
what replication is about: which leader epoch it writes under, how far
consumers may read (the high watermark) and, for read_committed consumers,
the last stable offset (LSO) and the aborted transactions their data
overlaps. Everything here is synchronous and runs on the broker's event-loop
thread, so a partition has exactly one writer.

With a single replica the high watermark is the log end offset after every
append; replication (ISR, followers) will move it from fetch positions.

Transactions: producer state knows each producer's open transaction, so the
LSO is the first offset of the oldest open one, capped by the high
watermark. The coordinator ends a transaction with a marker
(``write_txn_marker``); an abort marker also adds an entry to the log's
aborted-transaction index, which read_committed fetches return alongside
data below the LSO so consumers can drop the aborted records.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.producer_state import AppendOrigin
from broker_core.storage.txn_index import AbortedTxn
from broker_core.storage.unified_log import AppendResult, UnifiedLog
from spate.structs import IsolationLevel


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

    def __init__(self, topic: str, index: int, log: UnifiedLog, *, leader_epoch: int) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.leader_epoch = leader_epoch
        log.maybe_assign_epoch_start_offset(leader_epoch, log.log_end_offset)
        self.high_watermark = log.log_end_offset

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    def make_leader(self, leader_epoch: int) -> None:
        """Lead the partition at ``leader_epoch`` from now on; it writes from the log end."""
        self.leader_epoch = leader_epoch
        self.log.maybe_assign_epoch_start_offset(leader_epoch, self.log.log_end_offset)

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
        unstable = self.log.first_unstable_offset()
        if unstable is None:
            return self.high_watermark
        return min(unstable, self.high_watermark)

    # --- produce ---------------------------------------------------------------------------

    def append_records(
        self, records: memoryview | bytes, *, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> AppendResult:
        """Append as the leader; raise a typed error on any problem (see ``UnifiedLog.append_as_leader``).

        Nothing is written unless every batch of the request passes. A retried
        batch an idempotent producer already wrote is answered with its
        original offsets and not written again. Control batches are refused
        from clients (``ControlBatchFromClientError``); ``write_txn_marker``
        writes them.
        """
        result = self.log.append_as_leader(records, leader_epoch=self.leader_epoch, origin=origin)
        if not result.duplicate:
            self.high_watermark = self.log.log_end_offset
        return result

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

        Raises what ``UnifiedLog.append_txn_marker`` raises. The caller wakes
        fetches waiting on the partition.
        """
        result = self.log.append_txn_marker(
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            coordinator_epoch=coordinator_epoch,
            commit=commit,
            leader_epoch=self.leader_epoch,
            timestamp_ms=timestamp_ms,
        )
        self.high_watermark = self.log.log_end_offset
        return result.base_offset

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
        """``(timestamp, offset)`` of the first record at or after ``timestamp`` (ListOffsets)."""
        return self.log.offset_for_timestamp(timestamp)

    # --- admin -----------------------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset (DeleteRecords); returns the new low watermark."""
        return self.log.delete_records_before(offset)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.log.end_offset_for_epoch(epoch)

    def checkpoint(self) -> None:
        """Flush the log and snapshot producer state at its end (clean shutdown, periodic checkpoint)."""
        self.log.checkpoint()
