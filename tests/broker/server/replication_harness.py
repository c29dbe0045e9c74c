"""A replica manager leading partitions with followers, for tests of the leader's side of replication."""

from __future__ import annotations

from pathlib import Path

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.replication.partition import Partition
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.storage.config import LogConfig
from broker_core.storage.log_manager import LogManager
from spate.records import Record, build_batch

ME = 1


class Clock:
    def __init__(self, now: int = 1_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def records(count: int = 1) -> bytes:
    return build_batch([Record(i, 1_700_000_000_000, None, b"v") for i in range(count)])


class LeaderHarness:
    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.clock = Clock()
        self.config = BrokerConfig.from_properties({"broker.id": str(ME), "log.dirs": str(data_dir), **settings})
        log_manager = LogManager([data_dir], LogConfig(**to_log_config_kwargs(self.config)), clock=self.clock)
        self.purgatory = FetchPurgatory()
        self.replicas = ReplicaManager(node_id=ME, log_manager=log_manager, broker_config=self.config,
                                       clock=self.clock, purgatory=self.purgatory)

    def lead(self, topic: str = "t", index: int = 0, *, isr: tuple[int, ...] = (ME, 2),
             replicas: tuple[int, ...] = (ME, 2), leader_epoch: int = 0, partition_epoch: int = 0,
             configs: dict[str, str] | None = None) -> Partition:
        return self.replicas.make_leader(topic, index, leader_epoch, configs or {}, isr=isr, replicas=replicas,
                                         partition_epoch=partition_epoch, controller_epoch=1)
