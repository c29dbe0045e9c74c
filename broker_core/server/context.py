"""What request handlers see of the broker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from broker_core.cluster.metadata_store import MetadataStore
from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.group.group_coordinator import GroupCoordinator
from broker_core.coordinator.transaction.txn_coordinator import TransactionCoordinator
from broker_core.server.producer_ids import ProducerIdManager
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.topic_manager import TopicManager
from spate.protocol.api_keys import ApiKey
from spate.protocol.versions import VersionRange


@dataclass(frozen=True)
class BrokerContext:
    config: BrokerConfig
    node_id: int
    advertised_host: str
    advertised_port: int
    store: MetadataStore
    replicas: ReplicaManager
    topics: TopicManager
    producer_ids: ProducerIdManager
    versions: Mapping[ApiKey, VersionRange]
    clock: Callable[[], int]
    group_coordinator: GroupCoordinator | None = None
    txn_coordinator: TransactionCoordinator | None = None
