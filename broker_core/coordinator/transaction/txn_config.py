"""The broker settings the transaction coordinator obeys, read once from the broker config."""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.internal_topic import InternalTopicSpec
from spate.protocol.internal_records.transaction_log import TRANSACTION_STATE_TOPIC

# Between retries of markers whose partition could not take them (leader moving, storage error).
MARKER_RETRY_BACKOFF_MS = 100


@dataclass(frozen=True)
class TxnConfig:
    state_log_partitions: int = 50
    state_log_replication_factor: int = 1
    state_log_min_isr: int = 1
    state_log_segment_bytes: int = 104_857_600
    max_timeout_ms: int = 900_000
    id_expiration_ms: int = 604_800_000
    abort_timed_out_interval_ms: int = 10_000
    remove_expired_interval_ms: int = 3_600_000
    load_buffer_size: int = 5 * 1024 * 1024

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> TxnConfig:
        return cls(
            state_log_partitions=config.get_int("transaction.state.log.num.partitions"),
            state_log_replication_factor=config.get_int("transaction.state.log.replication.factor"),
            state_log_min_isr=config.get_int("transaction.state.log.min.isr"),
            state_log_segment_bytes=config.get_int("transaction.state.log.segment.bytes"),
            max_timeout_ms=config.get_int("transaction.max.timeout.ms"),
            id_expiration_ms=config.get_int("transactional.id.expiration.ms"),
            abort_timed_out_interval_ms=config.get_int("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
            remove_expired_interval_ms=config.get_int("transaction.remove.expired.transaction.cleanup.interval.ms"),
        )

    @property
    def state_log_configs(self) -> dict[str, str]:
        return {
            "cleanup.policy": "compact",
            "segment.bytes": str(self.state_log_segment_bytes),
            "min.insync.replicas": str(self.state_log_min_isr),
            "unclean.leader.election.enable": "false",
            "compression.type": "uncompressed",
        }

    @property
    def state_log_spec(self) -> InternalTopicSpec:
        """``__transaction_state`` as the coordinator creates it (``transaction.state.log.*``)."""
        return InternalTopicSpec(
            name=TRANSACTION_STATE_TOPIC,
            partitions=self.state_log_partitions,
            replication_factor=self.state_log_replication_factor,
            configs=self.state_log_configs,
            load_buffer_size=self.load_buffer_size,
        )
