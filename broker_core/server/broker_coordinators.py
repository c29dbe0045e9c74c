"""The group and transaction coordinators of a broker, built over its replicas and its view of the cluster.

Both coordinators keep their state in an internal topic (``__consumer_offsets``,
``__transaction_state``) that ``store`` reads and ``topics`` creates: the
local store and topic manager in an embedded broker, the metadata cache and
the ZooKeeper admin path in a cluster. The transaction coordinator writes
its markers through a :class:`BrokerMarkerWriter` (here when this broker
leads the partition, over a :class:`TxnMarkerChannel` to its leader
otherwise) and completes transactional offset commits through the group
coordinator, which asks it in turn whether a TxnOffsetCommit is valid.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable

from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.group import GroupConfig, GroupCoordinator
from broker_core.coordinator.group.consumer_group.consumer_group_config import ConsumerGroupConfig
from broker_core.coordinator.group.group_coordinator import TxnVerifier
from broker_core.coordinator.scheduler import LoopScheduler
from broker_core.coordinator.transaction import TransactionCoordinator, TransactionStateManager, TxnConfig
from broker_core.security.inter_broker import InterBrokerSecurity
from broker_core.server.handlers.consumer_group_heartbeat import TopicIdCache
from broker_core.server.internal_topic_adapter import BrokerInternalTopic
from broker_core.server.metadata_view import MetadataView, leader_of
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.txn_marker_channel import TxnMarkerChannel
from broker_core.server.txn_marker_writer import BrokerMarkerWriter
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.structs import TopicPartition


@dataclass(frozen=True)
class CoordinatorWiring:
    """What both coordinators are built over; ``store`` reads their topics and ``topics`` creates them."""

    config: BrokerConfig
    replicas: ReplicaManager
    store: Any
    topics: Any
    view: MetadataView
    clock: Callable[[], int]
    loop: asyncio.AbstractEventLoop

    def group_coordinator(self, txn_verifier: TxnVerifier) -> GroupCoordinator:
        group_config = GroupConfig.from_broker_config(self.config)
        offsets_topic = BrokerInternalTopic(group_config.offsets_topic_spec, store=self.store, topics=self.topics,
                                            replicas=self.replicas)
        return GroupCoordinator(
            group_config,
            offsets_topic,
            LoopScheduler(self.loop, self.clock),
            txn_verifier=txn_verifier,
            consumer_config=ConsumerGroupConfig.from_broker_config(self.config),
            topic_ids=TopicIdCache(self.view).as_topic_ids(),
        )

    def transaction_state(self, txn_config: TxnConfig) -> TransactionStateManager:
        return TransactionStateManager(
            BrokerInternalTopic(txn_config.state_log_spec, store=self.store, topics=self.topics,
                                replicas=self.replicas),
            partitions=txn_config.state_log_partitions,
        )

    def marker_channel(self) -> TxnMarkerChannel:
        return TxnMarkerChannel(client_id=f"broker-{self.config.node_id}-txn-markers",
                                security=InterBrokerSecurity.from_config(self.config))

    def transaction_coordinator(self, txn_config: TxnConfig, state: TransactionStateManager,
                                channel: TxnMarkerChannel, groups: GroupCoordinator,
                                next_producer_id: Callable[[], Any]) -> TransactionCoordinator:
        markers = BrokerMarkerWriter(
            replicas=self.replicas,
            partition_exists=self._partition_exists,
            leader_of=self._leader_endpoint,
            channel=channel,
            on_offsets_marker=lambda partition, producer_id, commit: groups.complete_transactional_offsets(
                offsets_partition=partition, producer_id=producer_id, commit=commit
            ),
            clock=self.clock,
            replication_timeout_ms=self.config.get_int("request.timeout.ms"),
        )

        def offsets_partition_for(group_id: str) -> TopicPartition:
            groups.ensure_offsets_topic()
            return TopicPartition(CONSUMER_OFFSETS_TOPIC, groups.partition_for(group_id))

        return TransactionCoordinator(
            txn_config,
            state,
            markers,
            LoopScheduler(self.loop, self.clock),
            next_producer_id=next_producer_id,
            partition_exists=self._partition_exists,
            offsets_partition_for=offsets_partition_for,
        )

    def _partition_exists(self, tp: TopicPartition) -> bool:
        count = self.view.partition_count(tp.topic)
        return count is not None and 0 <= tp.partition < count

    def _leader_endpoint(self, tp: TopicPartition) -> tuple[int, str, int] | None:
        leader = leader_of(self.view, tp.topic, tp.partition)
        return None if leader is None else (leader.broker_id, leader.host, leader.port)
