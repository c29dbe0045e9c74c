"""The partitions this broker hosts, keyed by (topic, partition): those it leads and those it follows.

A partition's local log comes from the log manager; the replica manager wraps
it in a ``UnifiedLog`` (recovering producer state) when the partition is
first hosted here. Request handlers ask :meth:`ReplicaManager.get` for the
partitions this broker *leads*; a followed partition keeps its log (and the
leader epoch it last heard) but serves no client.

Leadership listeners (the group and transaction coordinators) hear, on the
event loop, what each LeaderAndIsr or StopReplica request changed:
``on_become_leader(topic, partition, leader_epoch)``,
``on_become_follower(topic, partition, leader_epoch)`` and
``on_stop_replica(topic, partition)`` (Kafka's onLeadershipChange and
onResignation).
"""

from __future__ import annotations

import logging
import uuid
from typing import Callable, Iterator, Protocol, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import effective_topic_values, to_log_config_kwargs
from broker_core.replication.partition import Partition
from broker_core.server.purgatory import FetchPurgatory
from broker_core.storage.config import LogConfig
from broker_core.storage.unified_log import UnifiedLog

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
        self._listeners: list[LeadershipListener] = []

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
        isr: tuple[int, ...] | None = None,
        replicas: tuple[int, ...] | None = None,
        partition_epoch: int | None = None,
        controller_epoch: int | None = None,
    ) -> Partition:
        """Open (or create) the partition's log and lead it at ``leader_epoch`` with the given ISR and replicas."""
        key = (topic, index)
        partition = self._partitions.get(key)
        if partition is None:
            partition = self._open(topic, index, leader_epoch, topic_configs)
        partition.make_leader(leader_epoch, isr=isr, replicas=replicas, partition_epoch=partition_epoch,
                              controller_epoch=controller_epoch, now_ms=self._clock())
        self._leaders.add(key)
        # A smaller ISR may move the high watermark: acks=all produces and fetches waiting on it look again.
        self.purgatory.notify_append(key)
        return partition

    def make_follower(self, topic: str, index: int, leader_epoch: int, topic_configs: dict[str, str]) -> Partition:
        """Host the partition without leading it: its log stays, clients are told NOT_LEADER_OR_FOLLOWER.

        With one replica per partition there is nothing to fetch; a follower
        only remembers the leader epoch it was told. (A partition first opened
        here as a follower records that epoch in its epoch cache, as a leader
        would; replication from a leader must open followers without it.)
        """
        key = (topic, index)
        partition = self._partitions.get(key)
        if partition is None:
            partition = self._open(topic, index, leader_epoch, topic_configs)
        else:
            partition.leader_epoch = leader_epoch
        if key in self._leaders:
            self._leaders.discard(key)
            partition.checkpoint()
            # Fetches parked on a partition no longer led here answer NOT_LEADER_OR_FOLLOWER now.
            self.purgatory.notify_append(key)
        return partition

    def stop_replica(self, topic: str, index: int, *, delete: bool) -> None:
        """Stop hosting the partition; with ``delete`` its log goes too (even one not hosted).

        A stopped partition that is not deleted keeps its log on disk for a later LeaderAndIsr.
        """
        key = (topic, index)
        partition = self._partitions.pop(key, None)
        self._leaders.discard(key)
        if partition is not None and not delete:
            partition.checkpoint()
        if delete and self.log_manager.delete_log(topic, index):
            logger.info("deleted the log of %s-%d", topic, index)
        if not any(name == topic for name, _ in self._partitions):
            self._topic_ids.pop(topic, None)
        self.purgatory.notify_append(key)

    def _open(self, topic: str, index: int, leader_epoch: int, topic_configs: dict[str, str]) -> Partition:
        local_log = self.log_manager.get_or_create_log(topic, index, self.log_config_for(topic_configs))
        log = UnifiedLog(
            local_log,
            clock=self._clock,
            producer_id_expiration_ms=self._broker_config.get_int("producer.id.expiration.ms"),
        )
        partition = Partition(topic, index, log, leader_epoch=leader_epoch, node_id=self.node_id)
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
            partition.checkpoint()
        self.log_manager.checkpoint()

    def shutdown(self) -> None:
        """Snapshot producer state and close every log cleanly."""
        for partition in self:
            try:
                partition.checkpoint()
            except Exception:  # keep closing the others; the log recovers this one
                logger.exception("checkpoint of %r failed during shutdown", partition)
        self.log_manager.shutdown()
        self._partitions.clear()
        self._leaders.clear()
