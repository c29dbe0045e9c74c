"""Replicating partitions from one leader (Kafka's ``ReplicaFetcherThread`` over ``AbstractFetcherThread``).

A fetcher is one asyncio task on the broker's event loop, so appends to a
followed partition happen on the loop like every other write: one writer per
partition. It talks to the leader through a :class:`RemoteLeaderEndpoint`
(asyncio streams) and never decodes records: the leader's batches go to
``Partition.append_as_follower`` as bytes.

Each round:

1. **truncate** the partitions that just arrived (``fetch_state``): ask the
   leader (OffsetForLeaderEpoch) where this replica's latest epoch ended and
   cut the log there (``truncation``); a replica with no epochs cuts to its
   high watermark;
2. **fetch** the others from their log end (Fetch, long-polled by the
   leader), append what came, take the leader's high watermark (capped by
   this replica's log end) and log start offset.

Errors, per partition, as Kafka handles them:

* OFFSET_OUT_OF_RANGE: the leader's log end is below this replica's (an
  unclean election): truncate to it; else the leader's log start is above
  this replica's log end (DeleteRecords, retention): empty the log and
  start at the leader's log start;
* FENCED_LEADER_EPOCH: the leader is at a newer epoch than this replica was
  told; the partition leaves the fetcher until a LeaderAndIsr brings the
  new epoch;
* NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH (the leader has not heard of
  this epoch yet), UNKNOWN_TOPIC_OR_PARTITION and anything else: retry after
  ``replica.fetch.backoff.ms``;
* the leader unreachable: every partition of the request backs off, and the
  next request reconnects.

A response is applied only to the partition state it was asked for: a
partition removed, re-added or truncated while the request was out ignores
it (states are compared by identity, and the fetch offset must still match).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, Iterable, Mapping, Protocol

from broker_core.cancellation import raise_if_cancelled
from broker_core.replication.fetch_state import FetchPhase, InitialFetchState, PartitionFetchState
from broker_core.replication.leader_endpoint import (
    BrokerEndpoint,
    EpochEndOffset,
    FetchedPartition,
    FetchPosition,
    LeaderUnreachableError,
)
from broker_core.replication.partition import Partition
from broker_core.replication.truncation import OffsetTruncationState, offset_truncation_state
from spate.protocol import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# The partition this broker hosts, or None once it stopped hosting it.
PartitionLookup = Callable[[TopicPartition], "Partition | None"]


class LeaderClient(Protocol):
    """What a fetcher asks of its leader (``RemoteLeaderEndpoint``; tests may script their own)."""

    endpoint: BrokerEndpoint

    async def fetch(self, positions: Mapping[TopicPartition, FetchPosition]) -> dict[TopicPartition, FetchedPartition]:
        ...

    async def fetch_epoch_end_offsets(
        self, wanted: Mapping[TopicPartition, tuple[int, int]]
    ) -> dict[TopicPartition, EpochEndOffset]:
        ...

    async def fetch_earliest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        ...

    async def fetch_latest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        ...

    def close(self) -> None:
        ...


class ReplicaFetcher:
    """The partitions this broker follows from one leader, replicated by one task. Event loop only."""

    def __init__(self, *, name: str, leader: LeaderClient, partitions: PartitionLookup, backoff_ms: int) -> None:
        self.name = name
        self.leader = leader
        self._partitions = partitions
        self._backoff_s = backoff_ms / 1000
        self._states: dict[TopicPartition, PartitionFetchState] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._unreachable = False  # warned once; quieter until the leader answers again

    def __repr__(self) -> str:
        return f"ReplicaFetcher({self.name}, {self.leader.endpoint}, {len(self._states)} partition(s))"

    @property
    def source(self) -> BrokerEndpoint:
        return self.leader.endpoint

    # --- partitions ------------------------------------------------------------------------

    def add_partitions(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        """Start replicating these partitions: each truncates first, then fetches.

        A partition already here at the same leader epoch keeps its state
        (the same LeaderAndIsr applied twice changes nothing).
        """
        for tp, start in initial.items():
            current = self._states.get(tp)
            if current is not None and current.current_leader_epoch == start.current_leader_epoch:
                continue
            self._states[tp] = PartitionFetchState(start.init_offset, start.current_leader_epoch)
        self._changed.set()

    def remove_partitions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        removed = {}
        for tp in tps:
            state = self._states.pop(tp, None)
            if state is not None:
                removed[tp] = state
        return removed

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        return self._states.get(tp)

    @property
    def partitions(self) -> list[TopicPartition]:
        return list(self._states)

    @property
    def idle(self) -> bool:
        return not self._states

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self.name)

    def stop(self) -> asyncio.Task[None] | None:
        """Cancel the task and drop the connection; returns the task, to await if wanted."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self.leader.close()
        return task

    async def shutdown(self, timeout_s: float) -> None:
        task = self.stop()
        if task is not None:
            await asyncio.wait([task], timeout=timeout_s)

    async def _run(self) -> None:
        try:
            while True:
                await self._wait_until_ready()
                try:
                    await self._maybe_truncate()
                    await self._maybe_fetch()
                except Exception:  # a bug here must not stop replication of the other partitions for good
                    logger.exception("%s failed a round; backing off", self)
                    self._delay(self._states.values())
        finally:
            self.leader.close()

    async def _wait_until_ready(self) -> None:
        """Until some partition is due: a delay ran out or partitions were added."""
        loop = asyncio.get_running_loop()
        while True:
            raise_if_cancelled()  # asked first thing, so every turn of ``_run`` asks too
            now = loop.time()
            if any(state.ready(now) for state in self._states.values()):
                return
            timeout = min((state.delayed_until - now for state in self._states.values()), default=None)
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), timeout)
            except asyncio.TimeoutError:
                pass

    def _due(self, phase: FetchPhase) -> dict[TopicPartition, PartitionFetchState]:
        now = asyncio.get_running_loop().time()
        return {tp: s for tp, s in self._states.items() if s.phase is phase and s.ready(now)}

    def _current(self, tp: TopicPartition, state: PartitionFetchState, phase: FetchPhase) -> Partition | None:
        """The partition, if ``state`` is still its state here (nothing replaced it while a request was out)."""
        if self._states.get(tp) is not state or state.phase is not phase:
            return None
        partition = self._partitions(tp)
        if partition is None:  # no longer hosted here
            self._states.pop(tp, None)
        return partition

    def _delay(self, states: Iterable[PartitionFetchState]) -> None:
        until = asyncio.get_running_loop().time() + self._backoff_s
        for state in states:
            state.delayed_until = until

    def _leader_unreachable(self, exc: LeaderUnreachableError, states: Iterable[PartitionFetchState]) -> None:
        """Back off every partition asked about; warn once per outage."""
        (logger.debug if self._unreachable else logger.warning)("%s: %s; retrying every %.1fs", self, exc,
                                                                 self._backoff_s)
        self._unreachable = True
        self._delay(states)

    def _leader_answered(self) -> None:
        if self._unreachable:
            logger.info("%s: the leader answers again", self)
            self._unreachable = False

    def _fence(self, tp: TopicPartition, state: PartitionFetchState, what: str) -> None:
        logger.warning("%s: %s for %s at leader epoch %d is fenced: the leader has a newer epoch; "
                       "waiting for the controller's LeaderAndIsr", self, what, tp, state.current_leader_epoch)
        if self._states.get(tp) is state:
            del self._states[tp]

    # --- truncation ------------------------------------------------------------------------

    async def _maybe_truncate(self) -> None:
        with_epochs: dict[TopicPartition, tuple[PartitionFetchState, int]] = {}
        for tp, state in self._due(FetchPhase.TRUNCATING).items():
            partition = self._current(tp, state, FetchPhase.TRUNCATING)
            if partition is None:
                continue
            latest_epoch = partition.log.epoch_cache.latest_epoch
            if latest_epoch is None:
                # Nothing tells where the logs split: keep what is committed (the high watermark).
                self._truncate(tp, state, partition, OffsetTruncationState(state.fetch_offset, True))
            else:
                with_epochs[tp] = (state, latest_epoch)
        if not with_epochs:
            return
        wanted = {tp: (state.current_leader_epoch, epoch) for tp, (state, epoch) in with_epochs.items()}
        try:
            answers = await self.leader.fetch_epoch_end_offsets(wanted)
        except LeaderUnreachableError as exc:
            self._leader_unreachable(exc, [state for state, _ in with_epochs.values()])
            return
        self._leader_answered()
        for tp, (state, _) in with_epochs.items():
            partition = self._current(tp, state, FetchPhase.TRUNCATING)
            if partition is not None:
                self._apply_epoch_end_offset(tp, state, partition, answers[tp])

    def _apply_epoch_end_offset(
        self, tp: TopicPartition, state: PartitionFetchState, partition: Partition, answer: EpochEndOffset
    ) -> None:
        if answer.error is ErrorCode.FENCED_LEADER_EPOCH:
            self._fence(tp, state, "OffsetForLeaderEpoch")
            return
        if answer.error is not ErrorCode.NONE:
            logger.info("%s: the leader answered OffsetForLeaderEpoch for %s with %s; retrying", self, tp,
                        answer.error.name)
            self._delay([state])
            return
        truncation = offset_truncation_state(
            leader_epoch=answer.leader_epoch,
            leader_end_offset=answer.end_offset,
            replica_end_offset=partition.log_end_offset,
            initial_fetch_offset=state.fetch_offset,
            follower_end_offset_for=partition.end_offset_for_epoch,
        )
        self._truncate(tp, state, partition, truncation)

    def _truncate(
        self, tp: TopicPartition, state: PartitionFetchState, partition: Partition, truncation: OffsetTruncationState
    ) -> None:
        offset = min(truncation.offset, partition.log_end_offset)
        if partition.truncate_to(offset):
            logger.info("%s: truncated %s to offset %d", self, tp, offset)
        phase = FetchPhase.FETCHING if truncation.truncation_completed else FetchPhase.TRUNCATING
        state.move_to(phase, partition.log_end_offset)

    # --- fetching --------------------------------------------------------------------------

    async def _maybe_fetch(self) -> None:
        due = self._due(FetchPhase.FETCHING)
        positions: dict[TopicPartition, FetchPosition] = {}
        for tp, state in due.items():
            partition = self._current(tp, state, FetchPhase.FETCHING)
            if partition is not None:
                positions[tp] = FetchPosition(state.fetch_offset, state.current_leader_epoch,
                                              partition.log_start_offset)
        if not positions:
            return
        try:
            answers = await self.leader.fetch(positions)
        except LeaderUnreachableError as exc:
            self._leader_unreachable(exc, (due[tp] for tp in positions))
            return
        self._leader_answered()
        out_of_range = []
        for tp, position in positions.items():
            state, answer = due[tp], answers.get(tp)
            partition = self._current(tp, state, FetchPhase.FETCHING)
            if answer is None or partition is None or state.fetch_offset != position.fetch_offset:
                continue
            if answer.error is ErrorCode.NONE:
                self._process_partition_data(tp, state, partition, answer)
            elif answer.error is ErrorCode.OFFSET_OUT_OF_RANGE:
                out_of_range.append((tp, state))
            elif answer.error is ErrorCode.FENCED_LEADER_EPOCH:
                self._fence(tp, state, "Fetch")
            else:
                log = logger.debug if answer.error in _EXPECTED_DURING_LEADER_CHANGES else logger.warning
                log("%s: the leader answered Fetch for %s with %s; retrying", self, tp, answer.error.name)
                self._delay([state])
        for tp, state in out_of_range:
            await self._handle_out_of_range(tp, state)

    def _process_partition_data(
        self, tp: TopicPartition, state: PartitionFetchState, partition: Partition, answer: FetchedPartition
    ) -> None:
        if len(answer.records):
            if partition.log_end_offset != state.fetch_offset:
                logger.error("%s: %s fetched from offset %d but its log ends at %d; truncating again", self, tp,
                             state.fetch_offset, partition.log_end_offset)
                self._states[tp] = PartitionFetchState(partition.high_watermark, state.current_leader_epoch)
                return
            try:
                partition.append_as_follower(answer.records)
            except Exception as exc:
                logger.error("%s: appending the leader's batches of %s at offset %d failed: %s", self, tp,
                             state.fetch_offset, exc)
                self._delay([state])
                return
            state.move_to(FetchPhase.FETCHING, partition.log_end_offset)
        partition.update_high_watermark_as_follower(answer.high_watermark)
        # The leader's log start moved (DeleteRecords, retention): this replica's follows, up to what it holds.
        new_start = min(answer.log_start_offset, partition.high_watermark)
        if new_start > partition.log_start_offset:
            partition.delete_records_before(new_start)

    async def _handle_out_of_range(self, tp: TopicPartition, state: PartitionFetchState) -> None:
        """The leader has no data at this replica's fetch offset: realign with the leader's log (see module doc)."""
        epoch = state.current_leader_epoch
        try:
            leader_end = await self.leader.fetch_latest_offset(tp, epoch)
            partition = self._current(tp, state, FetchPhase.FETCHING)
            if partition is None:
                return
            if leader_end < partition.log_end_offset:
                logger.warning("%s: the leader's log of %s ends at %d, below this replica's end %d; truncating",
                               self, tp, leader_end, partition.log_end_offset)
                partition.truncate_to(leader_end)
                state.move_to(FetchPhase.FETCHING, partition.log_end_offset)
                return
            leader_start = await self.leader.fetch_earliest_offset(tp, epoch)
            partition = self._current(tp, state, FetchPhase.FETCHING)
            if partition is None:
                return
            if leader_start > partition.log_end_offset:
                logger.info("%s: the leader's log of %s starts at %d, past this replica's end %d; starting there",
                            self, tp, leader_start, partition.log_end_offset)
                partition.truncate_fully_and_start_at(leader_start)
            state.move_to(FetchPhase.FETCHING, partition.log_end_offset)
        except LeaderUnreachableError as exc:
            self._leader_unreachable(exc, [state])
        except KafkaError as exc:
            if exc.code is ErrorCode.FENCED_LEADER_EPOCH:
                self._fence(tp, state, "ListOffsets")
            else:
                logger.info("%s: looking up the leader's offsets of %s failed: %s; retrying", self, tp, exc)
                self._delay([state])


# Answers a follower sees while the controller's news travels; not worth a warning each time.
_EXPECTED_DURING_LEADER_CHANGES = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
})  # fmt: skip
