"""One partition on this broker, as its leader or one of its followers: epochs, ISR, watermarks, reads.

Storage is the partition's :class:`UnifiedLog`, and a produce request enters
it once (``UnifiedLog.append_as_leader``: validation, producer state,
the local append, aborted transactions, leader epochs). The partition adds
what replication is about: which leader epoch it writes under, how far
consumers may read (the high watermark) and, for read_committed consumers,
the last stable offset (LSO) and the aborted transactions their data
overlaps. Everything here is synchronous and runs on the broker's event-loop
thread, so a partition has exactly one writer.

As leader, the partition tracks each follower's log end offset from its
fetches (:class:`FollowerState`) and moves the high watermark to the
smallest log end offset in the ISR: a record is committed once every in-sync
replica holds it, and only then do consumers see it. It proposes ISR
changes (a follower that fell behind for ``replica.lag.time.max.ms`` leaves,
one that caught up returns); the broker writes them to the partition's
state and applies them with :meth:`apply_isr`. With one replica the ISR is
the leader alone and the high watermark is the log end offset after every
append. As follower, it appends the leader's batches unchanged, takes the
leader's high watermark (capped by its own log end), and truncates where its
log diverged from the leader's.

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


NO_LEADER = -1


@dataclass(slots=True)
class FollowerState:
    """The leader's view of one follower (Kafka's ``Replica``): how far it is and when it was last caught up."""

    broker_id: int
    log_end_offset: int = -1  # unknown until its first fetch
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0


class Partition:
    """A partition this broker hosts, as leader or follower."""

    def __init__(self, topic: str, index: int, log: UnifiedLog, *, leader_epoch: int, node_id: int = 0) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.node_id = node_id
        self.leader_epoch = leader_epoch
        self.leader_id = node_id
        self.replicas: tuple[int, ...] = (node_id,)
        self.isr: tuple[int, ...] = (node_id,)
        # The version of the partition's state znode this broker last knew (Kafka's partition epoch).
        self.partition_epoch = 0
        self._followers: dict[int, FollowerState] = {}
        log.maybe_assign_epoch_start_offset(leader_epoch, log.log_end_offset)
        self.high_watermark = log.log_end_offset

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.node_id

    def make_leader(
        self,
        leader_epoch: int,
        *,
        isr: tuple[int, ...] | None = None,
        replicas: tuple[int, ...] | None = None,
        partition_epoch: int | None = None,
        now_ms: int = 0,
    ) -> None:
        """Lead the partition at ``leader_epoch`` from now on; it writes from the log end.

        Followers start unknown (their log end offsets arrive with their next
        fetches) and in-sync ones count as caught up now, so none leaves the
        ISR before it had a chance to fetch from the new leader.
        """
        self.leader_epoch = leader_epoch
        self.leader_id = self.node_id
        self.replicas = tuple(replicas) if replicas else (self.node_id,)
        self.isr = tuple(isr) if isr else (self.node_id,)
        if partition_epoch is not None:
            self.partition_epoch = partition_epoch
        self._followers = {
            b: FollowerState(b, last_caught_up_ms=now_ms if b in self.isr else 0)
            for b in self.replicas if b != self.node_id
        }  # fmt: skip
        self.log.maybe_assign_epoch_start_offset(leader_epoch, self.log.log_end_offset)
        self.maybe_increment_high_watermark()

    def make_follower(
        self,
        leader_id: int,
        leader_epoch: int,
        *,
        isr: tuple[int, ...] = (),
        replicas: tuple[int, ...] = (),
        partition_epoch: int | None = None,
    ) -> None:
        """Follow ``leader_id`` at ``leader_epoch``: no more appends of its own, only the leader's batches."""
        self.leader_epoch = leader_epoch
        self.leader_id = leader_id
        self.replicas = tuple(replicas) or self.replicas
        self.isr = tuple(isr)
        if partition_epoch is not None:
            self.partition_epoch = partition_epoch
        self._followers = {}

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
            self.maybe_increment_high_watermark()
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
        self.maybe_increment_high_watermark()
        return result.base_offset

    # --- fetch -----------------------------------------------------------------------------

    def read(
        self, offset: int, max_bytes: int, *, isolation_level: int, min_one_batch: bool, for_replica: bool = False
    ) -> PartitionRead:
        """Whole batches from ``offset`` below the high watermark (or the LSO; a follower reads to the log end).

        Under read_committed the result also lists the aborted transactions
        the returned batches overlap: those aborted at or after ``offset``
        that began before the offset following the last returned batch.
        """
        high_watermark = self.high_watermark
        stable = self.last_stable_offset
        if for_replica:
            fetched = self.log.read(offset, max_bytes, min_one_batch=min_one_batch)
            return PartitionRead(fetched, high_watermark, stable, self.log.log_start_offset)
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

    # --- leader: followers, ISR and the high watermark ---------------------------------------

    def follower(self, broker_id: int) -> FollowerState | None:
        return self._followers.get(broker_id)

    def update_follower_fetch(self, broker_id: int, fetch_offset: int, now_ms: int) -> bool:
        """A follower fetched from ``fetch_offset``: it holds everything below. True if the high watermark moved.

        A follower asking from the leader's log end is caught up now.
        """
        state = self._followers.get(broker_id)
        if state is None:
            return False
        state.log_end_offset = fetch_offset
        state.last_fetch_ms = now_ms
        if fetch_offset >= self.log.log_end_offset:
            state.last_caught_up_ms = now_ms
        return self.maybe_increment_high_watermark()

    def maybe_increment_high_watermark(self) -> bool:
        """Move the high watermark to the smallest log end offset in the ISR; it never goes back."""
        if not self.is_leader:
            return False
        ends = [self.log.log_end_offset]
        for broker_id in self.isr:
            if broker_id != self.node_id:
                state = self._followers.get(broker_id)
                ends.append(state.log_end_offset if state is not None else -1)
        new = min(ends)
        if new > self.high_watermark:
            self.high_watermark = new
            return True
        return False

    def isr_to_shrink(self, now_ms: int, max_lag_ms: int) -> tuple[int, ...] | None:
        """The ISR without followers not caught up for ``max_lag_ms``; None when nobody lags."""
        lagging = {
            b for b in self.isr
            if b != self.node_id and now_ms - self._followers.get(b, FollowerState(b)).last_caught_up_ms > max_lag_ms
        }  # fmt: skip
        return tuple(b for b in self.isr if b not in lagging) if lagging else None

    def isr_to_expand(self, broker_id: int) -> tuple[int, ...] | None:
        """The ISR with ``broker_id`` back, if it caught up to the high watermark within this leader's epoch."""
        state = self._followers.get(broker_id)
        if state is None or broker_id in self.isr:
            return None
        epoch_start = self.log.epoch_cache.latest_entry
        start = epoch_start.start_offset if epoch_start is not None else 0
        if state.log_end_offset >= self.high_watermark and state.log_end_offset >= start:
            return (*self.isr, broker_id)
        return None

    def apply_isr(self, isr: tuple[int, ...], partition_epoch: int) -> bool:
        """Adopt an ISR the partition state now holds; True if the high watermark moved."""
        self.isr = tuple(isr)
        self.partition_epoch = partition_epoch
        return self.maybe_increment_high_watermark()

    # --- follower ---------------------------------------------------------------------------

    def append_as_follower(self, records: memoryview | bytes) -> AppendResult:
        """Append batches fetched from the leader, unchanged (``UnifiedLog.append_as_follower``)."""
        return self.log.append_as_follower(records)

    def update_high_watermark_as_follower(self, leader_high_watermark: int) -> None:
        """Take the leader's high watermark, capped by this replica's own log end."""
        self.high_watermark = max(self.high_watermark, min(leader_high_watermark, self.log.log_end_offset))

    def truncate_to(self, offset: int) -> bool:
        """Drop what this replica holds from ``offset`` on (its log diverged from the leader's)."""
        truncated = self.log.truncate_to(offset)
        self.high_watermark = min(self.high_watermark, self.log.log_end_offset)
        return truncated

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self.log.truncate_fully_and_start_at(offset)
        self.high_watermark = offset

    # --- admin -----------------------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset (DeleteRecords); returns the new low watermark."""
        return self.log.delete_records_before(offset)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.log.end_offset_for_epoch(epoch)

    def checkpoint(self) -> None:
        """Flush the log and snapshot producer state at its end (clean shutdown, periodic checkpoint)."""
        self.log.checkpoint()
