"""The leader's ISR upkeep: dropping followers that fell behind, taking back those that caught up.

Kafka's ZooKeeper-era ``ReplicaManager.maybeShrinkIsr`` (a task every
``replica.lag.time.max.ms / 2``) and ``Partition.maybeExpandIsr`` (on a
follower's fetch), with the leader writing the new ISR itself:

1. the partition proposes the change (``Partition.isr_to_shrink`` /
   ``isr_to_expand``) and marks it in flight (``propose_isr``); no other
   change is proposed until this one is settled;
2. a worker thread writes the partition state conditionally on the version
   the leader knows (:class:`IsrWriter`, ZooKeeper in a cluster), keeping the
   leader, leader epoch and controller epoch;
3. back on the event loop: written → ``apply_isr`` (the high watermark may
   move) and, for the whole batch, one ISR change notification so the
   controller tells the other brokers; the state changed meanwhile → read it:
   a newer leader epoch (or another leader) means this broker was deposed
   (``Partition.depose``: it refuses produce and fails acks=all produces
   still waiting until LeaderAndIsr arrives); otherwise the leader adopts the
   state it found and proposes again (at most :data:`MAX_ATTEMPTS` times);
   ZooKeeper failing → the change is dropped and the next check tries again.

A result that comes back after the partition's leadership changed (a
LeaderAndIsr arrived meanwhile) is ignored: the controller's state is newer.
Every change that touches a partition wakes what waits on it in the purgatory.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol

from broker_core.cluster.zk.partition_state_zk import IsrUpdate
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch
from broker_core.replication.partition import Partition
from broker_core.server.replica_manager import ReplicaManager
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3


class IsrWriter(Protocol):
    """Where the leader writes ISR changes (blocking; called from a worker thread)."""

    def update_isr(
        self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int
    ) -> IsrUpdate: ...

    def notify_isr_change(self, partitions: Iterable[TopicPartition]) -> object: ...


@dataclass(frozen=True, slots=True)
class _Change:
    partition: Partition
    isr: tuple[int, ...]
    leader_epoch: int
    expected_version: int
    joining: int | None  # the follower an expansion adds; None for a shrink
    attempt: int = 1

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.partition.topic, self.partition.index)

    def state(self) -> LeaderIsrAndControllerEpoch:
        partition = self.partition
        return LeaderIsrAndControllerEpoch(partition.node_id, self.leader_epoch, self.isr, partition.controller_epoch)


class IsrManager:
    def __init__(
        self,
        *,
        replicas: ReplicaManager,
        writer: IsrWriter,
        clock: Callable[[], int],
        max_lag_ms: int,
        broker_alive: Callable[[int], bool] = lambda broker_id: True,
    ) -> None:
        """``broker_alive(id)``: whether the broker is registered; only live brokers rejoin an ISR."""
        self._replicas = replicas
        self._writer = writer
        self._broker_alive = broker_alive
        self._clock = clock
        self.max_lag_ms = max_lag_ms
        self._tasks: set[asyncio.Task[None]] = set()
        self._periodic: asyncio.Task[None] | None = None
        # ISR changes applied here that removed or added replicas.
        self.shrinks = 0
        self.expands = 0

    # --- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Check every led partition's ISR every ``replica.lag.time.max.ms / 2`` (on the running loop)."""
        self._periodic = asyncio.create_task(self._every_half_lag(), name="isr-expiration")

    async def close(self) -> None:
        tasks = [*self._tasks, *([self._periodic] if self._periodic is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _every_half_lag(self) -> None:
        while True:
            await asyncio.sleep(max(self.max_lag_ms // 2, 1) / 1000)
            try:
                self.maybe_shrink_isrs()
            except Exception:
                logger.exception("the ISR check failed")

    async def settled(self) -> None:
        """Until every ISR write started so far is settled (for tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # --- proposals -----------------------------------------------------------------------------

    def maybe_shrink_isrs(self) -> None:
        """Drop from every led partition's ISR the followers not caught up within the lag; one write batch."""
        now = self._clock()
        changes = []
        for partition in self._replicas:
            if not self._replicas.is_leader(partition.topic, partition.index):
                continue
            shrunk = partition.isr_to_shrink(now, self.max_lag_ms)
            if shrunk is not None:
                changes.append(self._propose(partition, shrunk, joining=None))
        self._spawn(changes)

    def maybe_expand_isr(self, partition: Partition, follower_id: int) -> None:
        """A follower fetched: add it back to the ISR if it caught up and is alive (called by the fetch handler).

        A broker whose registration is gone (a zombie still fetching after its
        ZooKeeper session expired) stays out, as Kafka checks in ZooKeeper mode.
        A broker in controlled shutdown is still registered, and UpdateMetadata
        does not say it is leaving: the controller, which knows, takes it out
        again with a new leader epoch, and a fetch from before that epoch never
        brings it back (``Partition.isr_to_expand``).
        """
        expanded = partition.isr_to_expand(follower_id)
        if expanded is not None and self._broker_alive(follower_id):
            self._spawn([self._propose(partition, expanded, joining=follower_id)])

    def _propose(self, partition: Partition, isr: tuple[int, ...], *, joining: int | None, attempt: int = 1) -> _Change:
        logger.info("%s: %s ISR from %s to %s (high watermark %d, log end %d)", partition,
                    "shrinking" if joining is None else "expanding", list(partition.isr), list(isr),
                    partition.high_watermark, partition.log_end_offset)
        partition.propose_isr(isr)
        return _Change(partition, isr, partition.leader_epoch, partition.partition_epoch, joining, attempt)

    def _spawn(self, changes: list[_Change]) -> None:
        if not changes:
            return
        task = asyncio.get_running_loop().create_task(self._write(changes), name="isr-write")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- writes ---------------------------------------------------------------------------------

    async def _write(self, changes: list[_Change]) -> None:
        requests = [(change.tp, change.state(), change.expected_version) for change in changes]
        outcomes = await asyncio.to_thread(self._write_all, requests)
        written: list[TopicPartition] = []
        retries: list[_Change] = []
        for change, outcome in zip(changes, outcomes):
            if not self._current(change):
                logger.info("%s: leadership changed while its ISR was being written; the controller's state rules",
                            change.partition)
                continue
            if isinstance(outcome, Exception):
                logger.warning("%s: cannot write ISR %s: %s", change.partition, list(change.isr), outcome)
                change.partition.abandon_isr_change()
            elif outcome.written:
                self._applied(change.partition, change.isr, outcome.zk_version)
                written.append(change.tp)
            else:
                retry = self._after_conflict(change, outcome)
                if retry is not None:
                    retries.append(retry)
        if written:
            await self._notify(written)
        if retries:
            await self._write(retries)

    def _write_all(self, requests: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch, int]]) -> list[object]:
        """On a worker thread: each write on its own, so one failure does not hide the others' outcomes."""
        outcomes: list[object] = []
        for tp, state, version in requests:
            try:
                outcomes.append(self._writer.update_isr(tp, state, version))
            except Exception as exc:
                outcomes.append(exc)
        return outcomes

    async def _notify(self, partitions: list[TopicPartition]) -> None:
        try:
            await asyncio.to_thread(self._writer.notify_isr_change, partitions)
        except Exception as exc:
            logger.warning("cannot notify the controller of the ISR change of %s: %s",
                           ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions), exc)

    def _current(self, change: _Change) -> bool:
        """Whether the partition is still led here at the epoch the change was proposed in, with it in flight."""
        partition = change.partition
        return (
            self._replicas.get(partition.topic, partition.index) is partition
            and partition.is_leader
            and partition.leader_epoch == change.leader_epoch
            and partition.pending_isr == change.isr
        )

    def _applied(self, partition: Partition, isr: tuple[int, ...], zk_version: int) -> None:
        # Counted for metrics (Kafka's IsrShrinksPerSec and IsrExpandsPerSec).
        if len(isr) < len(partition.isr):
            self.shrinks += 1
        elif len(isr) > len(partition.isr):
            self.expands += 1
        partition.apply_isr(isr, zk_version)
        # The high watermark may have moved, and acks=all produces re-check the ISR against min.insync.replicas.
        self._replicas.notify_append(partition)
        logger.info("%s: ISR is now %s (partition epoch %d)", partition, list(isr), zk_version)

    def _after_conflict(self, change: _Change, outcome: IsrUpdate) -> _Change | None:
        """The partition state changed since the leader read it: deposed, or adopt it and propose again."""
        partition = change.partition
        partition.abandon_isr_change()
        found = outcome.current
        if found is None:
            logger.warning("%s: the partition state is gone; ISR %s not written", partition, list(change.isr))
            return None
        if found.leader_epoch > change.leader_epoch or found.leader != partition.node_id:
            logger.warning("%s: deposed: the partition state has leader %d at epoch %d, this broker led epoch %d",
                           partition, found.leader, found.leader_epoch, change.leader_epoch)
            partition.depose()
            self._replicas.notify_append(partition)
            return None
        logger.info("%s: the partition state moved to version %d (ISR %s); proposing again", partition,
                    outcome.zk_version, list(found.isr))
        self._applied(partition, found.isr, outcome.zk_version)
        if change.attempt >= MAX_ATTEMPTS:
            return None
        if change.joining is None:
            isr = partition.isr_to_shrink(self._clock(), self.max_lag_ms)
        else:
            isr = partition.isr_to_expand(change.joining)
        if isr is None:
            return None
        return self._propose(partition, isr, joining=change.joining, attempt=change.attempt + 1)
