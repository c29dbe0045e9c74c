"""The broker settings of consumer groups (``group.consumer.*``), read once from the broker config."""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.config.broker_config import BrokerConfig
from broker_core.coordinator.group.consumer_group.assignors import assignors_named


@dataclass(frozen=True)
class ConsumerGroupConfig:
    heartbeat_interval_ms: int = 5000
    session_timeout_ms: int = 45000
    # Server-side assignors members may choose; the first is the default.
    assignors: tuple[str, ...] = ("uniform", "range")
    max_size: int = 2**31 - 1
    # Kafka's group.consumer.migration.policy: which empty groups may change type on a first join.
    migration_policy: str = "bidirectional"

    def __post_init__(self) -> None:
        assignors_named(list(self.assignors))  # fails with the setting's name when one is unknown
        if self.migration_policy not in ("bidirectional", "upgrade", "downgrade", "disabled"):
            raise ValueError(f"group.consumer.migration.policy: unknown policy {self.migration_policy!r}")

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ConsumerGroupConfig:
        return cls(
            heartbeat_interval_ms=config.get_int("group.consumer.heartbeat.interval.ms"),
            session_timeout_ms=config.get_int("group.consumer.session.timeout.ms"),
            assignors=config.get_list("group.consumer.assignors"),
            max_size=config.get_int("group.consumer.max.size"),
            migration_policy=str(config.get("group.consumer.migration.policy")),
        )

    @property
    def upgrades(self) -> bool:
        """An empty classic group may become a consumer group."""
        return self.migration_policy in ("bidirectional", "upgrade")

    @property
    def downgrades(self) -> bool:
        """An empty consumer group may become a classic group."""
        return self.migration_policy in ("bidirectional", "downgrade")
