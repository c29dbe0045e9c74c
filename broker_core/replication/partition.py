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
state (:meth:`propose_isr` marks one in flight) and applies them with
:meth:`apply_isr`. While a change is in flight no other is proposed, and the
high watermark counts the *maximal* ISR (the current one plus a follower
being added), so it never passes a replica about to join. With one replica
the ISR is the leader alone and the high watermark is the log end offset
after every append. An acks=all append needs ``min.insync.replicas``
replicas in the ISR before it is written, and is answered once the high
watermark passes it (:meth:`check_enough_replicas_reach_offset`).

A leader that learns from the partition state that a newer leader epoch
exists is deposed (:meth:`depose`): it stops leading until the controller's
LeaderAndIsr says what it is now. As follower, it appends the leader's
batches unchanged, takes the leader's high watermark (capped by its own log
end), and truncates where its log diverged from the leader's.

Transactions: producer state knows each producer's open transaction, so the
LSO is the first offset of the oldest open one, capped by the high
watermark. The coordinator ends a transaction with a marker
(``write_txn_marker``); an abort marker also adds an entry to the log's
aborted-transaction index, which read_committed fetches return alongside
data below the LSO so consumers can drop the aborted records.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.replication.replica import UNKNOWN_OFFSET, FollowerState
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.producer_state import AppendOrigin
from broker_core.storage.txn_index import AbortedTxn
from broker_core.storage.unified_log import AppendResult, UnifiedLog
from spate.protocol.errors import ErrorCode, KafkaError
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
ACKS_ALL = -1


class IsrChangeInFlightError(Exception):
    """An ISR change was proposed while another one is still being written."""


class Partition:
    """A partition this broker hosts, as leader or follower."""

    def __init__(
        self, topic: str, index: int, log: UnifiedLog, *, leader_epoch: int | None, node_id: int = 0
    ) -> None:
        """A partition led here at ``leader_epoch``; with None, one that follows (``make_follower`` says whom).

        A follower records no epoch of its own: its epochs come only with the
        leader's batches, or OffsetForLeaderEpoch answers from this replica
        would name an epoch that wrote nothing here.
        """
        self.topic = topic
        self.index = index
        self.log = log
        self.node_id = node_id
        following = leader_epoch is None
        latest = log.epoch_cache.latest_epoch
        self.leader_epoch = (latest if latest is not None else -1) if following else leader_epoch
        self.leader_id = NO_LEADER if following else node_id
        self.replicas: tuple[int, ...] = (node_id,)
        self.isr: tuple[int, ...] = (node_id,)
        # An ISR change being written to the partition state; None when none is in flight.
        self.pending_isr: tuple[int, ...] | None = None
        # The version of the partition's state znode this broker last knew (Kafka's partition epoch).
        self.partition_epoch = 0
        # The epoch of the controller that elected this leader; the leader's own ISR writes keep it.
        self.controller_epoch = 0
        # The topic's min.insync.replicas: how many in-sync replicas an acks=all append needs.
        self.min_insync_replicas = 1
        self._followers: dict[int, FollowerState] = {}
        if not following:
            log.maybe_assign_epoch_start_offset(self.leader_epoch, log.log_end_offset)
        # Where this leader's epoch began (its log end offset then); None while not leading.
        self.leader_epoch_start_offset: int | None = None if following else log.log_end_offset
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
        controller_epoch: int | None = None,
        now_ms: int = 0,
    ) -> None:
        """Lead the partition at ``leader_epoch`` from now on; it writes from the log end.

        A new leader knows nothing of its followers (their log end offsets
        arrive with their next fetches); a leader re-elected for a new epoch
        keeps what it knew. In-sync followers count as caught up now, so none
        leaves the ISR before it had a chance to fetch from this leader.
        """
        new_leader = not self.is_leader
        self.leader_epoch = leader_epoch
        self.leader_id = self.node_id
        self.replicas = tuple(replicas) if replicas else (self.node_id,)
        self.isr = tuple(isr) if isr else (self.node_id,)
        self.pending_isr = None
        if partition_epoch is not None:
            self.partition_epoch = partition_epoch
        if controller_epoch is not None:
            self.controller_epoch = controller_epoch
        end = self.log.log_end_offset
        self.log.maybe_assign_epoch_start_offset(leader_epoch, end)
        self.leader_epoch_start_offset = end
        followers: dict[int, FollowerState] = {}
        for broker_id in self.replicas:
            if broker_id == self.node_id:
                continue
            state = (None if new_leader else self._followers.get(broker_id)) or FollowerState(broker_id)
            state.reset(now_ms=now_ms, leader_end_offset=end, new_leader=new_leader, in_sync=broker_id in self.isr)
            followers[broker_id] = state
        self._followers = followers
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
        self.pending_isr = None
        if partition_epoch is not None:
            self.partition_epoch = partition_epoch
        self._followers = {}
        self.leader_epoch_start_offset = None

    def depose(self) -> None:
        """The partition state names a newer leader epoch: stop leading until LeaderAndIsr says what comes next.

        Appends are refused (NOT_LEADER_OR_FOLLOWER) and acks=all appends
        still waiting fail; the log, the epoch and the ISR stay as they were
        until the controller's request arrives.
        """
        self.leader_id = NO_LEADER
        self.pending_isr = None
        self.leader_epoch_start_offset = None

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
        self, records: memoryview | bytes, *, origin: AppendOrigin = AppendOrigin.CLIENT, required_acks: int = 1
    ) -> AppendResult:
        """Append as the leader; raise a typed error on any problem (see ``UnifiedLog.append_as_leader``).

        A partition that is not led here refuses (NOT_LEADER_OR_FOLLOWER); an
        acks=all append (``required_acks`` -1) is refused before anything is
        written while the ISR is smaller than ``min.insync.replicas``
        (NOT_ENOUGH_REPLICAS). Nothing is written unless every batch of the request passes. A retried
        batch an idempotent producer already wrote is answered with its
        original offsets and not written again. Control batches are refused
        from clients (``ControlBatchFromClientError``); ``write_txn_marker``
        writes them.
        """
        self._check_leader()
        if required_acks == ACKS_ALL and len(self.isr) < self.min_insync_replicas:
            raise KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"{self}: the ISR {list(self.isr)} is smaller than min.insync.replicas {self.min_insync_replicas}",
            )
        result = self.log.append_as_leader(records, leader_epoch=self.leader_epoch, origin=origin)
        if not result.duplicate:
            self.maybe_increment_high_watermark()
        return result

    def _check_leader(self) -> None:
        if not self.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{self} is not led by broker {self.node_id}")

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
        self._check_leader()
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

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR with any replica whose addition is being written (Kafka's maximal ISR)."""
        if self.pending_isr is None:
            return self.isr
        return (*self.isr, *(b for b in self.pending_isr if b not in self.isr))

    def update_follower_fetch(
        self,
        broker_id: int,
        fetch_offset: int,
        now_ms: int,
        *,
        log_start_offset: int = UNKNOWN_OFFSET,
        leader_end_offset: int | None = None,
    ) -> bool:
        """A follower fetched from ``fetch_offset``: it holds everything below. True if the high watermark moved.

        ``leader_end_offset`` is this log's end offset when the fetch was
        read (by default now); see :class:`FollowerState` for when that makes
        the follower caught up.
        """
        state = self._followers.get(broker_id)
        if state is None or not self.is_leader:
            return False
        end = self.log.log_end_offset if leader_end_offset is None else leader_end_offset
        state.update_fetch_state(fetch_offset, log_start_offset=log_start_offset, fetch_ms=now_ms,
                                 leader_end_offset=end, leader_epoch=self.leader_epoch)
        return self.maybe_increment_high_watermark()

    def maybe_increment_high_watermark(self) -> bool:
        """Move the high watermark to the smallest log end offset in the maximal ISR; it never goes back."""
        if not self.is_leader:
            return False
        new = self.log.log_end_offset
        for broker_id in self.maximal_isr:
            if broker_id != self.node_id:
                state = self._followers.get(broker_id)
                new = min(new, state.log_end_offset if state is not None else UNKNOWN_OFFSET)
        if new > self.high_watermark:
            self.high_watermark = new
            return True
        return False

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, ErrorCode]:
        """Whether an acks=all append ending before ``required_offset`` is done, and with which error.

        Done once the high watermark reached it: NONE if the ISR still has
        ``min.insync.replicas`` members, else NOT_ENOUGH_REPLICAS_AFTER_APPEND
        (the ISR shrank after the append). A partition no longer led here is
        done with NOT_LEADER_OR_FOLLOWER.
        """
        if not self.is_leader:
            return True, ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.high_watermark < required_offset:
            return False, ErrorCode.NONE
        if len(self.maximal_isr) < self.min_insync_replicas:
            return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return True, ErrorCode.NONE

    def isr_to_shrink(self, now_ms: int, max_lag_ms: int) -> tuple[int, ...] | None:
        """The ISR without followers not caught up for ``max_lag_ms``; None if nobody lags or a change is in flight."""
        if not self.is_leader or self.pending_isr is not None:
            return None
        end = self.log.log_end_offset
        lagging = {
            b for b in self.isr
            if b != self.node_id and not self._followers.get(b, FollowerState(b)).is_caught_up(end, now_ms, max_lag_ms)
        }  # fmt: skip
        return tuple(b for b in self.isr if b not in lagging) if lagging else None

    def isr_to_expand(self, broker_id: int) -> tuple[int, ...] | None:
        """The ISR with ``broker_id`` back, if it caught up to the high watermark within this leader's epoch.

        Caught up within the epoch (Kafka's ``isFollowerInSync``): its latest
        fetch was made in the current leader epoch and reached both the high
        watermark and the offset where the epoch began. A position known
        from an earlier epoch proves nothing: the controller may have taken
        the follower out since (its broker shutting down, with no fetch after).
        None when it is in the ISR already, is not a replica, or another ISR change is in flight.
        """
        state = self._followers.get(broker_id)
        start = self.leader_epoch_start_offset
        if state is None or broker_id in self.isr or not self.is_leader or self.pending_isr is not None:
            return None
        if state.last_fetch_leader_epoch != self.leader_epoch:
            return None
        if start is not None and state.log_end_offset >= self.high_watermark and state.log_end_offset >= start:
            return (*self.isr, broker_id)
        return None

    def propose_isr(self, isr: tuple[int, ...]) -> None:
        """Mark an ISR change as being written; the high watermark counts the maximal ISR meanwhile."""
        if self.pending_isr is not None:
            raise IsrChangeInFlightError(f"{self}: ISR change to {list(self.pending_isr)} is still in flight")
        self.pending_isr = tuple(isr)

    def abandon_isr_change(self) -> None:
        """The proposed change was not written (the state changed meanwhile, or ZooKeeper failed)."""
        self.pending_isr = None

    def apply_isr(self, isr: tuple[int, ...], partition_epoch: int) -> bool:
        """Adopt an ISR the partition state now holds; True if the high watermark moved."""
        self.isr = tuple(isr)
        self.pending_isr = None
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
