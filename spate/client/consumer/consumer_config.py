"""The consumer's settings: Kafka's consumer properties, their defaults and the rules between them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from spate.client.config import ClientConfig
from spate.client.consumer.assignors import PartitionAssignor, resolve_assignors
from spate.client.consumer.subscription_state import OffsetResetStrategy
from spate.structs import IsolationLevel


@dataclass(frozen=True, slots=True)
class ConsumerConfig(ClientConfig):
    """Every setting ``Consumer(...)`` takes by keyword, with Kafka's names (dots as underscores) and defaults.

    ``isolation_level`` is kept as an :class:`IsolationLevel` and
    ``auto_offset_reset`` as an :class:`OffsetResetStrategy`.
    ``default_api_timeout_ms`` bounds the blocking calls (``position``,
    ``beginning_offsets``, ``commit``, ...) that take no timeout of their
    own. The group settings (``group_id`` and those after it) apply to a
    consumer with a group id and are checked only then;
    ``partition_assignment_strategy`` lists assignors by preference
    (``"range"``, ``"roundrobin"``, or objects with a ``name`` and an
    ``assign`` method), resolved into :attr:`assignors`.
    """

    client_id: str = "spate-consumer"
    isolation_level: str | int = "read_uncommitted"
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    max_partition_fetch_bytes: int = 1_048_576
    fetch_max_bytes: int = 52_428_800
    auto_offset_reset: str | OffsetResetStrategy = "latest"
    check_crcs: bool = True
    default_api_timeout_ms: int = 60_000
    group_id: str | None = None
    group_instance_id: str | None = None
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5_000
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000  # also the rebalance timeout, as in Kafka
    partition_assignment_strategy: str | PartitionAssignor | Sequence[str | PartitionAssignor] = (
        "range",
        "roundrobin",
    )
    assignors: tuple[PartitionAssignor, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        # The order of the checks decides which error a set of bad values gets; it is the order of old.
        if self.fetch_min_bytes < 0 or self.fetch_max_wait_ms < 0:
            raise ValueError("fetch_min_bytes and fetch_max_wait_ms must not be negative")
        if self.max_partition_fetch_bytes <= 0 or self.fetch_max_bytes <= 0:
            raise ValueError("max_partition_fetch_bytes and fetch_max_bytes must be positive")
        object.__setattr__(self, "isolation_level", IsolationLevel.parse(self.isolation_level))
        ClientConfig.__post_init__(self)
        object.__setattr__(self, "auto_offset_reset", OffsetResetStrategy.parse(self.auto_offset_reset))
        if self.group_id is not None:
            self._check_group_settings()

    def _check_group_settings(self) -> None:
        object.__setattr__(self, "assignors", tuple(resolve_assignors(self.partition_assignment_strategy)))
        if not self.group_id:
            raise ValueError("group_id must not be empty")
        if self.heartbeat_interval_ms <= 0 or self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be positive and below session_timeout_ms")
        if self.max_poll_interval_ms <= 0 or self.auto_commit_interval_ms <= 0:
            raise ValueError("max_poll_interval_ms and auto_commit_interval_ms must be positive")

    @property
    def group(self) -> str:
        """The group id, for the parts of a consumer that exist only with one."""
        if self.group_id is None:
            raise ValueError("a consumer created without a group_id has no group")
        return self.group_id

    @property
    def isolation(self) -> IsolationLevel:
        return self.isolation_level  # type: ignore[return-value]  # parsed in __post_init__

    @property
    def reset_strategy(self) -> OffsetResetStrategy:
        return self.auto_offset_reset  # type: ignore[return-value]  # parsed in __post_init__

    @property
    def default_api_timeout(self) -> float:
        return self.default_api_timeout_ms / 1000
