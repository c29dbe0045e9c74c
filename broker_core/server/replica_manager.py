"""The partitions this broker hosts, keyed by (topic, partition): those it leads and those it follows.

A partition's local log comes from the log manager; the replica manager wraps
it in a ``UnifiedLog`` (recovering producer state) when the partition is
first hosted here. Request handlers ask :meth:`ReplicaManager.get` for the
partitions this broker *leads*; a followed partition serves no client: the
replica fetchers (``fetchers``, one set per source broker) copy the leader's
batches into it.

Leadership listeners (the group and transaction coordinators) hear, on the
event loop, what each LeaderAndIsr or StopReplica request changed:
``on_become_leader(topic, partition, leader_epoch)``,
``on_become_follower(topic, partition, leader_epoch)`` and
``on_stop_replica(topic, partition)`` (Kafka's onLeadershipChange and
onResignation).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from pathlib import Path
from typing import Callable, Iterator, Protocol, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import effective_topic_values, to_log_config_kwargs
from broker_core.replication.fetch_state import InitialFetchState
from broker_core.replication.high_watermark_checkpoints import HighWatermarkCheckpoints
from broker_core.replication.leader_endpoint import BrokerEndpoint
from broker_core.replication.partition import NO_LEADER, Partition
from broker_core.replication.replica_fetcher_manager import ReplicaFetcherConfig, ReplicaFetcherManager
from broker_core.server.purgatory import FetchPurgatory
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogDirError
from broker_core.storage.unified_log import UnifiedLog
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

NO_EPOCH = -1
PartitionKey = tuple[str, int]


class LeadershipListener(Protocol):
    def on_become_leader(self, topic: str, partition: int, leader_epoch: int) -> None:
        ...

    def on_become_follower(self, topic: str, partition: int, leader_epoch: int) -> None:
        ...

    def on_stop_replica(self, topic: str, partition: int) -> None:
        ...


class ReplicaManager:
    def __init__(
        self,
        *,
        node_id: int,
        log_manager,  # broker_core.storage.log_manager.LogManager
        broker_config: BrokerConfig,
        clock: Callable[[], int],
        purgatory: FetchPurgatory,
    ) -> None:
        self.node_id = node_id
        self.log_manager = log_manager
        self._broker_config = broker_config
        self._clock = clock
        self.purgatory = purgatory
        self._partitions: dict[PartitionKey, Partition] = {}  # every hosted partition
        self._leaders: set[PartitionKey] = set()
        self._topic_ids: dict[str, uuid.UUID] = {}
        # Each hosted topic's config overrides, to derive its logs' configs again when broker defaults change.
        self._topic_overrides: dict[str, dict[str, str]] = {}
        self._listeners: list[LeadershipListener] = []
        self._high_watermarks = HighWatermarkCheckpoints(log_manager.log_dirs, log_manager.failures)
        # Partitions whose log dir failed: their requests answer KAFKA_STORAGE_ERROR until a restart.
        self._offline: set[PartitionKey] = set()
        # Replicates the partitions followed here from their leaders.
        self.fetchers = ReplicaFetcherManager(
            node_id=node_id, config=ReplicaFetcherConfig.from_broker_config(broker_config),
            partitions=self._followed,
        )

    def reconfigure(self, broker_config: BrokerConfig) -> None:
        """New broker-wide log defaults (dynamic broker configs): every hosted log takes them up now."""
        self._broker_config = broker_config
        for topic, overrides in list(self._topic_overrides.items()):
            self.update_topic_config(topic, overrides)

    def log_config_for(self, topic_configs: dict[str, str]) -> LogConfig:
        return LogConfig(**to_log_config_kwargs(self._broker_config, topic_configs))

    def min_insync_replicas_for(self, topic_configs: dict[str, str]) -> int:
        return int(effective_topic_values(self._broker_config, topic_configs)["min.insync.replicas"])

    # --- hosting ------------------------------------------------------------------------------

    def make_leader(
        self,
        topic: str,
        index: int,
        leader_epoch: int,
        topic_configs: dict[str, str],
        *,
        isr: Sequence[int] = (),
        replicas: Sequence[int] = (),
        partition_epoch: int | None = None,
        controller_epoch: int | None = None,
        is_new: bool = True,
    ) -> Partition:
        """Open (or create) the partition's log and lead it at ``leader_epoch`` with the controller's ISR.

        Replicating it from another broker stops first (Kafka's makeLeaders).
        Without ``isr``/``replicas`` (the embedded broker) it leads alone.
        """
        key = (topic, index)
        self.fetchers.remove_fetcher_for_partitions([TopicPartition(topic, index)])
        with self._hosting(topic, index, leader_epoch, topic_configs, as_follower=False, is_new=is_new) as partition:
            partition.make_leader(
                leader_epoch, isr=tuple(isr) or None, replicas=tuple(replicas) or None,
                partition_epoch=partition_epoch, controller_epoch=controller_epoch, now_ms=self._clock(),
            )
            self._leaders.add(key)
        # A smaller ISR may move the high watermark: acks=all produces and fetches waiting on it look again.
        self.purgatory.notify_append(key)
        return partition

    def make_follower(
        self,
        topic: str,
        index: int,
        leader_epoch: int,
        topic_configs: dict[str, str],
        *,
        leader_id: int = NO_LEADER,
        leader_endpoint: BrokerEndpoint | None = None,
        isr: Sequence[int] = (),
        replicas: Sequence[int] = (),
        partition_epoch: int | None = None,
        is_new: bool = True,
    ) -> Partition:
        """Follow ``leader_id`` at ``leader_epoch``: clients are told NOT_LEADER_OR_FOLLOWER, a fetcher replicates.

        As Kafka's makeFollowers: the partition leaves any fetcher first (a
        fetch still out for the old leader is ignored when it returns), then
        joins the fetcher of the new leader, where it first truncates to
        where its log agrees with the leader's (``replica_fetcher``) and then
        fetches from its log end. A partition opened here for the first time
        records no leader epoch of its own: only the leader's batches bring
        epochs. Without an endpoint for the leader nothing is fetched until a
        LeaderAndIsr brings one.
        """
        key = (topic, index)
        tp = TopicPartition(topic, index)
        self.fetchers.remove_fetcher_for_partitions([tp])
        with self._hosting(topic, index, leader_epoch, topic_configs, as_follower=True, is_new=is_new) as partition:
            partition.make_follower(leader_id, leader_epoch, isr=tuple(isr), replicas=tuple(replicas),
                                    partition_epoch=partition_epoch)
            if key in self._leaders:
                self._leaders.discard(key)
                partition.checkpoint()
                # Fetches parked on a partition no longer led here answer NOT_LEADER_OR_FOLLOWER now.
                self.purgatory.notify_append(key)
            if leader_id < 0:
                logger.info("%r has no leader at leader epoch %d: nothing to replicate", partition, leader_epoch)
            elif leader_endpoint is None:
                logger.error("%r follows broker %d at leader epoch %d, but that broker's endpoint is unknown; "
                             "not replicating until a LeaderAndIsr names a reachable leader", partition, leader_id,
                             leader_epoch)
            else:
                self.fetchers.add_fetcher_for_partitions(
                    {tp: InitialFetchState(leader_endpoint, leader_epoch, partition.high_watermark)}
                )
        return partition

    def stop_replica(self, topic: str, index: int, *, delete: bool) -> None:
        """Stop hosting the partition; with ``delete`` its log goes too (even one not hosted).

        A stopped partition that is not deleted keeps its log on disk for a later LeaderAndIsr.
        """
        key = (topic, index)
        self.fetchers.remove_fetcher_for_partitions([TopicPartition(topic, index)])
        partition = self._partitions.pop(key, None)
        self._leaders.discard(key)
        if partition is not None and not delete:
            partition.checkpoint()
        if delete and self.log_manager.delete_log(topic, index):
            logger.info("deleted the log of %s-%d", topic, index)
        if not any(name == topic for name, _ in self._partitions):
            self._topic_ids.pop(topic, None)
        self._topic_overrides.pop(topic, None)
        self.purgatory.notify_append(key)

    def handle_log_dir_failure(self, log_dir: Path) -> list[PartitionKey]:
        """Take every partition of the failed ``log_dir`` offline here (Kafka's handleLogDirFailure).

        They stop replicating, leave the leaders, wake their parked requests
        (which answer KAFKA_STORAGE_ERROR now) and are announced as stopped,
        so the coordinators unload what they held; their logs close. The
        controller, told separately, moves leadership to other replicas.
        """
        keys = [key for key, partition in self._partitions.items() if partition.log.directory.parent == log_dir]
        self.fetchers.remove_fetcher_for_partitions([TopicPartition(*key) for key in keys])
        for key in keys:
            self._partitions.pop(key)
            self._leaders.discard(key)
        gone = set(keys) | {(tp.topic, tp.partition) for tp in self.log_manager.take_offline(log_dir)}
        self._offline |= gone
        for key in keys:
            self.purgatory.notify_append(key)
        self.shutdown_idle_fetchers()
        self.announce(stopped=keys)
        return sorted(gone)

    def is_offline(self, topic: str, index: int) -> bool:
        """Whether the partition's log is in a log dir that failed."""
        return (topic, index) in self._offline

    @property
    def offline_count(self) -> int:
        """Partitions whose log is in a failed log dir."""
        return len(self._offline)

    def shutdown_idle_fetchers(self) -> None:
        self.fetchers.shutdown_idle_fetchers()

    @contextlib.contextmanager
    def _hosting(
        self, topic: str, index: int, leader_epoch: int, topic_configs: dict[str, str], *, as_follower: bool,
        is_new: bool,
    ) -> Iterator[Partition]:
        """The hosted partition, or one opened now for the body to lead or follow.

        If opening it or the body fails (too many open files, a log dir
        error), a partition opened here is closed again: it is no longer
        hosted, and a log created for it is deleted, so nothing half-opened
        stays behind (a log that existed before stays, as it was).
        """
        key = (topic, index)
        hosted = self._partitions.get(key)
        if hosted is not None:
            yield hosted
            return
        had_log = self.log_manager.get_log(topic, index) is not None
        try:
            yield self._open(topic, index, leader_epoch, topic_configs, as_follower=as_follower, is_new=is_new)
        except BaseException:
            self._abandon(topic, index, delete_log=not had_log)
            raise

    def _abandon(self, topic: str, index: int, *, delete_log: bool) -> None:
        """Undo a partition's opening that failed half-way."""
        key = (topic, index)
        self.fetchers.remove_fetcher_for_partitions([TopicPartition(topic, index)])
        self._partitions.pop(key, None)
        self._leaders.discard(key)
        if not delete_log:
            return
        try:
            if self.log_manager.delete_log(topic, index):
                logger.info("removed the log of %s-%d, whose opening failed", topic, index)
        except Exception as exc:  # the opening's own error is the one to answer
            logger.warning("cannot remove the log of %s-%d after its opening failed: %s", topic, index, exc)

    def _open(
        self, topic: str, index: int, leader_epoch: int, topic_configs: dict[str, str], *, as_follower: bool = False,
        is_new: bool = True,
    ) -> Partition:
        self._topic_overrides[topic] = dict(topic_configs)
        local_log = self.log_manager.get_or_create_log(topic, index, self.log_config_for(topic_configs),
                                                       is_new=is_new)
        log = UnifiedLog(
            local_log,
            clock=self._clock,
            producer_id_expiration_ms=self._broker_config.get_int("producer.id.expiration.ms"),
        )
        partition = Partition(topic, index, log, leader_epoch=None if as_follower else leader_epoch,
                              node_id=self.node_id)
        partition.high_watermark = self._high_watermarks.initial(TopicPartition(topic, index), log.log_end_offset)
        partition.min_insync_replicas = self.min_insync_replicas_for(topic_configs)
        self._partitions[(topic, index)] = partition
        return partition

    # --- lookups ------------------------------------------------------------------------------

    def get(self, topic: str, index: int) -> Partition | None:
        """The partition if this broker leads it."""
        key = (topic, index)
        return self._partitions.get(key) if key in self._leaders else None

    def hosted(self, topic: str, index: int) -> Partition | None:
        """The partition if this broker hosts it, as leader or follower."""
        return self._partitions.get((topic, index))

    def _followed(self, tp: TopicPartition) -> Partition | None:
        """The partition if this broker hosts it as a follower (what a fetcher may append to)."""
        key = (tp.topic, tp.partition)
        return None if key in self._leaders else self._partitions.get(key)

    def leader_epoch(self, topic: str, index: int) -> int:
        """The leader epoch this broker last accepted for the partition; :data:`NO_EPOCH` if not hosted."""
        partition = self._partitions.get((topic, index))
        return partition.leader_epoch if partition is not None else NO_EPOCH

    def is_leader(self, topic: str, index: int) -> bool:
        return (topic, index) in self._leaders

    def __iter__(self) -> Iterator[Partition]:
        """Every hosted partition, led or followed."""
        return iter(list(self._partitions.values()))

    def leader_count(self) -> int:
        return len(self._leaders)

    # --- topic ids ----------------------------------------------------------------------------

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """The id the controller gave the topic of the hosted partitions, if it gave one."""
        return self._topic_ids.get(topic)

    def set_topic_id(self, topic: str, topic_id: uuid.UUID) -> None:
        self._topic_ids[topic] = topic_id

    # --- leadership listeners -----------------------------------------------------------------

    def add_leadership_listener(self, listener: LeadershipListener) -> None:
        self._listeners.append(listener)

    def announce(
        self,
        *,
        leaders: Sequence[tuple[str, int, int]] = (),
        followers: Sequence[tuple[str, int, int]] = (),
        stopped: Sequence[tuple[str, int]] = (),
    ) -> None:
        """Tell every listener what a LeaderAndIsr or StopReplica changed; a failing listener is logged."""
        for listener in list(self._listeners):
            for call, items in (
                (listener.on_become_leader, leaders),
                (listener.on_become_follower, followers),
                (listener.on_stop_replica, stopped),
            ):
                for item in items:
                    try:
                        call(*item)
                    except Exception:
                        logger.exception("leadership listener %r failed on %s", listener, item)

    # --- topics and housekeeping -------------------------------------------------------------

    def update_topic_config(self, topic: str, topic_configs: dict[str, str]) -> None:
        if topic in self._topic_overrides:
            self._topic_overrides[topic] = dict(topic_configs)
        config = self.log_config_for(topic_configs)
        min_insync_replicas = self.min_insync_replicas_for(topic_configs)
        for (name, _), partition in list(self._partitions.items()):
            if name == topic:
                partition.log.update_config(config)
                partition.min_insync_replicas = min_insync_replicas

    def remove_topic(self, topic: str) -> None:
        """Delete every hosted partition of the topic (the embedded broker's DeleteTopics)."""
        for key in [k for k in self._partitions if k[0] == topic]:
            partition = self._partitions.pop(key)
            self._leaders.discard(key)
            self.log_manager.delete_log(*key)
            # Wake fetches parked on the partition so they answer with an error now.
            self.purgatory.notify_append(key)
            logger.info("deleted %r", partition)
        self._topic_ids.pop(topic, None)

    def notify_append(self, partition: Partition) -> None:
        self.purgatory.notify_append((partition.topic, partition.index))

    def checkpoint_all(self) -> None:
        for partition in self:
            try:
                partition.checkpoint()
            except LogDirError as exc:  # reported: its dir goes offline
                logger.warning("checkpoint of %r failed: %s", partition, exc)
        self.log_manager.checkpoint(log_start_offsets=False)
        self.checkpoint_high_watermarks()

    def remove_expired_producers(self, now_ms: int) -> None:
        """Forget, on every log, producer ids idle for ``producer.id.expiration.ms`` and in no open transaction."""
        for partition in self:
            partition.log.producer_state.remove_expired_producers(now_ms)

    def checkpoint_high_watermarks(self) -> None:
        self.high_watermarks_writer()()

    def high_watermarks_writer(self) -> Callable[[], None]:
        """Every partition's high watermark as of now; the returned call writes them, from any thread."""
        entries = [(p.log.directory, TopicPartition(p.topic, p.index), p.high_watermark) for p in self]
        return lambda: self._high_watermarks.write(entries)

    async def shutdown_fetchers(self) -> None:
        """Stop replicating (bounded): no fetcher appends once this returns."""
        await self.fetchers.close()

    def shutdown(self) -> None:
        """Stop any fetcher still running, snapshot producer state and close every log cleanly."""
        self.fetchers.stop_all()
        try:
            self.checkpoint_high_watermarks()
        except Exception:  # the next start only shows consumers less until the ISR confirms it again
            logger.exception("writing the high watermark checkpoints failed during shutdown")
        # Each log's snapshot and flush run in its close job, logs of a dir closing in parallel.
        self.log_manager.shutdown({TopicPartition(p.topic, p.index): p.checkpoint for p in self})
        self._partitions.clear()
        self._leaders.clear()
