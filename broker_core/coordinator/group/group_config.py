"""The broker settings the group coordinator obeys, read once from the broker config."""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.internal_topic import InternalTopicSpec
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC

# How long a member that joined for the first time may wait in a rebalance
# without a heartbeat before it is dropped (Kafka's NewMemberJoinTimeoutMs),
# so a client that vanished mid-join cannot hold the group up for a whole
# rebalance timeout.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


@dataclass(frozen=True)
class GroupConfig:
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3000
    max_group_size: int = 2**31 - 1
    offsets_topic_partitions: int = 50
    offsets_topic_replication_factor: int = 1
    offsets_topic_segment_bytes: int = 104_857_600
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    offsets_load_buffer_size: int = 5 * 1024 * 1024
    new_member_join_timeout_ms: int = NEW_MEMBER_JOIN_TIMEOUT_MS

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> GroupConfig:
        return cls(
            min_session_timeout_ms=config.get_int("group.min.session.timeout.ms"),
            max_session_timeout_ms=config.get_int("group.max.session.timeout.ms"),
            initial_rebalance_delay_ms=config.get_int("group.initial.rebalance.delay.ms"),
            max_group_size=config.get_int("group.max.size"),
            offsets_topic_partitions=config.get_int("offsets.topic.num.partitions"),
            offsets_topic_replication_factor=config.get_int("offsets.topic.replication.factor"),
            offsets_topic_segment_bytes=config.get_int("offsets.topic.segment.bytes"),
            offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60_000,
            offsets_retention_check_interval_ms=config.get_int("offsets.retention.check.interval.ms"),
            offset_metadata_max_bytes=config.get_int("offset.metadata.max.bytes"),
            offsets_load_buffer_size=config.get_int("offsets.load.buffer.size"),
        )

    @property
    def offsets_topic_spec(self) -> InternalTopicSpec:
        """``__consumer_offsets`` as the coordinator creates it (``offsets.topic.*``)."""
        return InternalTopicSpec(
            name=CONSUMER_OFFSETS_TOPIC,
            partitions=self.offsets_topic_partitions,
            replication_factor=self.offsets_topic_replication_factor,
            configs={
                "cleanup.policy": "compact",
                "segment.bytes": str(self.offsets_topic_segment_bytes),
                "compression.type": "producer",
            },
            load_buffer_size=self.offsets_load_buffer_size,
        )
