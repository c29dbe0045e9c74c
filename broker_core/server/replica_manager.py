"""The partitions this broker hosts, keyed by (topic, partition).

A partition's local log comes from the log manager; the replica manager wraps
it in a ``UnifiedLog`` (recovering producer state) when the partition is first
led here.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterator

from broker_core.cluster.metadata_store import PartitionState
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.replication.partition import Partition
from broker_core.server.purgatory import FetchPurgatory
from broker_core.storage.config import LogConfig
from broker_core.storage.unified_log import UnifiedLog

logger = logging.getLogger(__name__)


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
        self._partitions: dict[tuple[str, int], Partition] = {}

    def log_config_for(self, topic_configs: dict[str, str]) -> LogConfig:
        return LogConfig(**to_log_config_kwargs(self._broker_config, topic_configs))

    def make_leader(self, topic: str, index: int, state: PartitionState, topic_configs: dict[str, str]) -> Partition:
        """Open (or create) the partition's log and lead it at ``state.leader_epoch``."""
        key = (topic, index)
        existing = self._partitions.get(key)
        if existing is not None:
            existing.make_leader(state.leader_epoch)
            return existing
        local_log = self.log_manager.get_or_create_log(topic, index, self.log_config_for(topic_configs))
        log = UnifiedLog(
            local_log,
            clock=self._clock,
            producer_id_expiration_ms=self._broker_config.get_int("producer.id.expiration.ms"),
        )
        partition = Partition(topic, index, log, leader_epoch=state.leader_epoch)
        self._partitions[key] = partition
        return partition

    def get(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def __iter__(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

    def update_topic_config(self, topic: str, topic_configs: dict[str, str]) -> None:
        config = self.log_config_for(topic_configs)
        for (name, _), partition in self._partitions.items():
            if name == topic:
                partition.log.update_config(config)

    def remove_topic(self, topic: str) -> None:
        for key in [k for k in self._partitions if k[0] == topic]:
            partition = self._partitions.pop(key)
            self.log_manager.delete_log(*key)
            # Wake fetches parked on the partition so they answer with an error now.
            self.purgatory.notify_append(key)
            logger.info("deleted %r", partition)

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
