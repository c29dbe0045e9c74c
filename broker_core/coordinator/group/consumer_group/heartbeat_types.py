"""What a ConsumerGroupHeartbeat asks of the coordinator and what it answers, in the broker's terms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from spate.protocol.errors import ErrorCode

# A topic's partition count, or None when the topic does not exist.
PartitionCounts = Callable[[str], "int | None"]


@dataclass(frozen=True)
class TopicsImage:
    """What the coordinator reads of the cluster's topics: their names (for regexes) and partition counts."""

    names: Callable[[], "list[str]"]
    partition_count: PartitionCounts


@dataclass(frozen=True)
class ConsumerHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    # Owned partitions by topic name; None: unchanged since the last heartbeat.
    owned: Mapping[str, frozenset[int]] | None = None
    client_id: str = ""
    client_host: str = ""


@dataclass(frozen=True)
class ConsumerHeartbeatResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    # The partitions the member may own now; None when unchanged since the last answer.
    assignment: Mapping[str, frozenset[int]] | None = None


def failed(error: ErrorCode, message: str | None) -> ConsumerHeartbeatResult:
    return ConsumerHeartbeatResult(error=error, message=message)
