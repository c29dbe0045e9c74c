"""The controller's requests applied to this broker: LeaderAndIsr, StopReplica, UpdateMetadata.

Kafka's ``ReplicaManager.becomeLeaderOrFollower``, ``stopReplicas`` and
``maybeUpdateMetadataCache``, with the fencing rules of each:

* a request from a controller epoch older than the newest one seen is
  refused whole (STALE_CONTROLLER_EPOCH); one naming an older epoch of this
  broker's registration is refused whole too (STALE_BROKER_EPOCH; -1 means
  "do not check");
* LeaderAndIsr answers KAFKA_STORAGE_ERROR for a partition whose log dir
  failed here (whatever its epoch: that is how the controller learns which
  replicas a failed log dir took), and for one whose log is not found while
  a log dir is offline, unless the partition is new;
* LeaderAndIsr changes a partition only for a leader epoch newer than the
  one hosted here (an equal or older one: STALE_CONTROLLER_EPOCH), only if
  this broker is one of its replicas (else UNKNOWN_TOPIC_OR_PARTITION), and
  only if the topic id matches the one already hosted (else
  INCONSISTENT_TOPIC_ID); the partition then becomes leader (with the
  request's ISR, replicas and partition epoch) or follower, replicated from
  the leader at the endpoint the request lists in ``live_leaders`` (else the
  one the metadata cache knows);
* StopReplica stops a partition for the deletion sentinel (-2), no epoch
  (-1), or an epoch at least the hosted one (else FENCED_LEADER_EPOCH), and
  deletes its log when asked, hosted or not: a broker that was down while
  its topic was deleted is told when it comes back.

Requests are applied one at a time, in arrival order (one lock, Kafka's
``replicaStateChangeLock``); only reading topic configs from ZooKeeper
leaves the event loop. Opening or deleting thousands of partitions takes
seconds, so a request's partitions are applied in slices of at most
:data:`SLICE_S`, the loop free to serve other clients between slices; the
lock keeps the next request waiting meanwhile. The mutations stay on the
loop thread (as ``topic_manager`` does it): the replica and log managers
need no locks of their own. Leadership listeners hear once the request's
partitions are all applied — or, when it is cancelled (the broker stops),
of those applied so far. A partition whose opening fails answers its own
error and is left unopened (``ReplicaManager``); the others still apply.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from broker_core.replication.leader_endpoint import BrokerEndpoint
from broker_core.server.errors import error_code_for
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.replica_manager import NO_EPOCH, ReplicaManager
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

EPOCH_DURING_DELETE = -2
NO_BROKER_EPOCH = -1
_ZERO_UUID = uuid.UUID(int=0)
# Longest stretch of a request's partitions applied between two turns of the event loop.
SLICE_S = 0.02

# topic names -> each topic's config overrides (blocking: ZooKeeper)
TopicConfigsReader = Callable[[list[str]], dict[str, dict[str, str]]]


@dataclass
class StateChangeOutcome:
    """The answer to one controller request: a request-level error and one error per partition."""

    error: ErrorCode = ErrorCode.NONE
    partitions: dict[TopicPartition, ErrorCode] = field(default_factory=dict)
    deleted: list[TopicPartition] = field(default_factory=list)  # UpdateMetadata: partitions it removed


@dataclass(frozen=True)
class _LeaderAndIsrEntry:
    tp: TopicPartition
    topic_id: uuid.UUID | None
    state: Any  # LeaderAndIsrPartitionState


class _LoopSlices:
    """Gives the event loop a turn whenever the current slice has lasted :data:`SLICE_S`."""

    def __init__(self, length_s: float = SLICE_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._length_s = length_s
        self._clock = clock
        self._end = clock() + length_s
        self.turns = 0

    async def pause(self) -> None:
        if self._clock() >= self._end:
            await asyncio.sleep(0)
            self.turns += 1
            self._end = self._clock() + self._length_s


@dataclass
class _Changed:
    """What a request changed, for the leadership listeners: (topic, partition, leader epoch) or (topic, partition)."""

    leaders: list[tuple[str, int, int]] = field(default_factory=list)
    followers: list[tuple[str, int, int]] = field(default_factory=list)
    stopped: list[tuple[str, int]] = field(default_factory=list)


class ReplicaStateChanges:
    """Applies controller requests to the replica manager and the metadata cache, fenced by epochs."""

    def __init__(
        self,
        *,
        node_id: int,
        replicas: ReplicaManager,
        cache: MetadataCache,
        topic_configs: TopicConfigsReader,
        broker_epoch: Callable[[], int],
    ) -> None:
        self._node_id = node_id
        self._replicas = replicas
        self._cache = cache
        self._topic_configs = topic_configs
        self._broker_epoch = broker_epoch
        self._lock = asyncio.Lock()
        # Kafka's KafkaController.InitialControllerEpoch - 1: any controller is newer.
        self.controller_epoch = -1

    def _refusal(self, what: str, body: Any) -> ErrorCode | None:
        """The request-level error fencing ``body`` off, if any; otherwise its controller epoch is the newest."""
        current = self._broker_epoch()
        if body.broker_epoch != NO_BROKER_EPOCH and current != NO_BROKER_EPOCH and body.broker_epoch < current:
            logger.info("ignoring %s for broker epoch %d: this broker's epoch is %d", what, body.broker_epoch, current)
            return ErrorCode.STALE_BROKER_EPOCH
        if body.controller_epoch < self.controller_epoch:
            logger.warning(
                "ignoring %s from controller %d: its epoch %d is older than %d",
                what, body.controller_id, body.controller_epoch, self.controller_epoch,
            )
            return ErrorCode.STALE_CONTROLLER_EPOCH
        self.controller_epoch = body.controller_epoch
        return None

    # --- UpdateMetadata ------------------------------------------------------------------------

    async def update_metadata(self, body: Any) -> StateChangeOutcome:
        async with self._lock:
            refused = self._refusal("UpdateMetadata", body)
            if refused is not None:
                return StateChangeOutcome(refused)
            return StateChangeOutcome(deleted=self._cache.update_metadata(body))

    # --- LeaderAndIsr --------------------------------------------------------------------------

    async def become_leader_or_follower(self, body: Any) -> StateChangeOutcome:
        entries = list(_leader_and_isr_entries(body))
        async with self._lock:
            refused = self._refusal("LeaderAndIsr", body)
            if refused is not None:
                return StateChangeOutcome(refused, {entry.tp: refused for entry in entries})
            outcome = StateChangeOutcome()
            accepted = [entry for entry in entries if self._accepts(entry, outcome)]
            configs = await self._configs_for(accepted, outcome)
            live_leaders = {b.broker_id: BrokerEndpoint(b.broker_id, b.host_name, b.port) for b in body.live_leaders}
            changed, slices = _Changed(), _LoopSlices()
            try:
                for entry in accepted:
                    await slices.pause()
                    if entry.tp in outcome.partitions:
                        continue
                    became = self._apply(entry, configs.get(entry.tp.topic, {}), outcome, live_leaders)
                    if became is not None:
                        change = (entry.tp.topic, entry.tp.partition, entry.state.leader_epoch)
                        (changed.leaders if became else changed.followers).append(change)
            finally:
                # Fetchers left with nothing to replicate stop (Kafka's shutdownIdleFetcherThreads).
                self._replicas.shutdown_idle_fetchers()
                self._replicas.announce(leaders=changed.leaders, followers=changed.followers)
            logger.info(
                "LeaderAndIsr from controller %d (epoch %d): leading %d, following %d, refused %d of %d "
                "partition(s), in %d slice(s)",
                body.controller_id, body.controller_epoch, len(changed.leaders), len(changed.followers),
                sum(code != ErrorCode.NONE for code in outcome.partitions.values()), len(entries), slices.turns + 1,
            )
            return outcome

    def _accepts(self, entry: _LeaderAndIsrEntry, outcome: StateChangeOutcome) -> bool:
        tp, state = entry.tp, entry.state
        if self._replicas.is_offline(tp.topic, tp.partition):
            outcome.partitions[tp] = ErrorCode.KAFKA_STORAGE_ERROR
            return False
        known_id = self._replicas.topic_id(tp.topic)
        if entry.topic_id is not None and known_id is not None and entry.topic_id != known_id:
            logger.error("LeaderAndIsr for %s names topic id %s, but the hosted topic has %s", tp, entry.topic_id,
                         known_id)
            outcome.partitions[tp] = ErrorCode.INCONSISTENT_TOPIC_ID
            return False
        current = self._replicas.leader_epoch(tp.topic, tp.partition)
        if state.leader_epoch <= current:
            logger.info("ignoring LeaderAndIsr for %s: leader epoch %d, this broker has %d", tp, state.leader_epoch,
                        current)
            outcome.partitions[tp] = ErrorCode.STALE_CONTROLLER_EPOCH
            return False
        if self._node_id not in state.replicas:
            logger.warning("ignoring LeaderAndIsr for %s: broker %d is not among its replicas %s", tp, self._node_id,
                           list(state.replicas))
            outcome.partitions[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            return False
        return True

    async def _configs_for(
        self, entries: list[_LeaderAndIsrEntry], outcome: StateChangeOutcome
    ) -> dict[str, dict[str, str]]:
        """Config overrides of the topics whose partitions are opened here for the first time."""
        topics = {e.tp.topic for e in entries if self._replicas.hosted(e.tp.topic, e.tp.partition) is None}
        if not topics:
            return {}
        try:
            return await asyncio.to_thread(self._topic_configs, sorted(topics))
        except Exception as exc:
            code = error_code_for(exc, where="reading topic configs")
            logger.error("cannot read the configs of %s: %s", sorted(topics), exc)
            for entry in entries:
                if entry.tp.topic in topics:
                    outcome.partitions[entry.tp] = code
            return {}

    def _apply(
        self,
        entry: _LeaderAndIsrEntry,
        configs: dict[str, str],
        outcome: StateChangeOutcome,
        live_leaders: dict[int, BrokerEndpoint],
    ) -> bool | None:
        """Lead or follow the partition; True for leader, False for follower, None if it failed."""
        tp, state = entry.tp, entry.state
        if self._replicas.is_offline(tp.topic, tp.partition):  # its log dir failed since the request arrived
            outcome.partitions[tp] = ErrorCode.KAFKA_STORAGE_ERROR
            return None
        shared = dict(isr=tuple(state.isr), replicas=tuple(state.replicas), partition_epoch=state.partition_epoch,
                      is_new=bool(state.is_new))
        try:
            if state.leader == self._node_id:
                self._replicas.make_leader(
                    tp.topic, tp.partition, state.leader_epoch, configs, controller_epoch=state.controller_epoch,
                    **shared,
                )
            else:
                self._replicas.make_follower(
                    tp.topic, tp.partition, state.leader_epoch, configs, leader_id=state.leader,
                    leader_endpoint=live_leaders.get(state.leader) or self._broker_endpoint(state.leader), **shared,
                )
        except Exception as exc:
            outcome.partitions[tp] = error_code_for(exc, where=f"LeaderAndIsr for {tp}")
            return None
        if entry.topic_id is not None:
            self._replicas.set_topic_id(tp.topic, entry.topic_id)
        outcome.partitions[tp] = ErrorCode.NONE
        return state.leader == self._node_id

    def _broker_endpoint(self, broker_id: int) -> BrokerEndpoint | None:
        """A leader the LeaderAndIsr did not list, from the metadata cache."""
        registration = self._cache.alive_broker(broker_id)
        if registration is None:
            return None
        return BrokerEndpoint(broker_id, registration.host, registration.port)

    # --- StopReplica ---------------------------------------------------------------------------

    async def stop_replicas(self, body: Any) -> StateChangeOutcome:
        entries = list(_stop_replica_entries(body))
        async with self._lock:
            refused = self._refusal("StopReplica", body)
            if refused is ErrorCode.STALE_BROKER_EPOCH:
                return StateChangeOutcome(refused, {tp: refused for tp, _, _ in entries})
            if refused is not None:
                return StateChangeOutcome(refused)
            outcome = StateChangeOutcome()
            changed, slices = _Changed(), _LoopSlices()
            try:
                for tp, leader_epoch, delete in entries:
                    await slices.pause()
                    outcome.partitions[tp] = self._stop(tp, leader_epoch, delete)
                    if outcome.partitions[tp] == ErrorCode.NONE:
                        changed.stopped.append((tp.topic, tp.partition))
            finally:
                self._replicas.shutdown_idle_fetchers()
                self._replicas.announce(stopped=changed.stopped)
            deleted = sum(1 for _, _, delete in entries if delete)
            logger.info("StopReplica from controller %d: stopped %d of %d partition(s) (%d to delete), "
                        "in %d slice(s)", body.controller_id, len(changed.stopped), len(entries), deleted,
                        slices.turns + 1)
            return outcome

    def _stop(self, tp: TopicPartition, leader_epoch: int, delete: bool) -> ErrorCode:
        current = self._replicas.leader_epoch(tp.topic, tp.partition)
        checked = leader_epoch not in (EPOCH_DURING_DELETE, NO_EPOCH)
        if current != NO_EPOCH and checked and leader_epoch < current:
            logger.warning("ignoring StopReplica for %s: leader epoch %d is older than %d", tp, leader_epoch, current)
            return ErrorCode.FENCED_LEADER_EPOCH
        try:
            self._replicas.stop_replica(tp.topic, tp.partition, delete=delete)
        except Exception as exc:
            return error_code_for(exc, where=f"StopReplica for {tp}")
        return ErrorCode.NONE


def _leader_and_isr_entries(body: Any) -> Iterable[_LeaderAndIsrEntry]:
    """Every partition state of a LeaderAndIsr request, in either layout (by topic from v2, flat before)."""
    for topic in body.topic_states:
        topic_id = topic.topic_id if topic.topic_id != _ZERO_UUID else None
        for state in topic.partition_states:
            yield _LeaderAndIsrEntry(TopicPartition(topic.topic_name, state.partition_index), topic_id, state)
    for state in body.ungrouped_partition_states:
        yield _LeaderAndIsrEntry(TopicPartition(state.topic_name, state.partition_index), None, state)


def _stop_replica_entries(body: Any) -> Iterable[tuple[TopicPartition, int, bool]]:
    """(partition, leader epoch, delete) for every partition of a StopReplica request of any version."""
    for topic in body.topic_states:  # v3
        for state in topic.partition_states:
            yield TopicPartition(topic.topic_name, state.partition_index), state.leader_epoch, state.delete_partition
    for topic in body.topics:  # v1-v2
        for index in topic.partition_indexes:
            yield TopicPartition(topic.name, index), NO_EPOCH, body.delete_partitions
    for partition in body.ungrouped_partitions:  # v0
        yield TopicPartition(partition.topic_name, partition.partition_index), NO_EPOCH, body.delete_partitions
