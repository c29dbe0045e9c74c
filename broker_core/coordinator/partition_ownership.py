"""Which partitions of a coordinator's internal topic this broker owns, and whether each is loaded.

A key (a group id, a transactional id) lives on partition
``partition_for(key)``; the coordinator answers for it while this broker
leads that partition. An owned partition is LOADING until its records have
been replayed, then LOADED; one whose log could not be read stays FAILED
rather than serve keys with missing state. Each status has Kafka's answer
for the keys on that partition.
"""

from __future__ import annotations

import enum

from broker_core.coordinator.partitioning import partition_for
from spate.protocol.errors import ErrorCode


class PartitionStatus(enum.Enum):
    """Where a coordinator is with a partition of its topic that this broker leads."""

    LOADING = "loading"  # replaying its records; its keys answer COORDINATOR_LOAD_IN_PROGRESS
    LOADED = "loaded"
    FAILED = "failed"  # its log could not be read; its keys answer COORDINATOR_NOT_AVAILABLE


_ANSWERS = {
    None: ErrorCode.NOT_COORDINATOR,
    PartitionStatus.LOADING: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    PartitionStatus.FAILED: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    PartitionStatus.LOADED: ErrorCode.NONE,
}


class OwnedPartitions:
    """The owned partitions of one internal topic and their statuses; the topic has ``partition_count``."""

    def __init__(self, partition_count: int) -> None:
        self.partition_count = partition_count
        self._status: dict[int, PartitionStatus] = {}

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.partition_count)

    def status(self, partition: int) -> PartitionStatus | None:
        """None while this broker does not own ``partition``."""
        return self._status.get(partition)

    def set_status(self, partition: int, status: PartitionStatus) -> None:
        self._status[partition] = status

    def coordinator_error(self, key: str) -> ErrorCode:
        """NONE when this broker answers for ``key`` now, else the code that says why not."""
        return _ANSWERS[self._status.get(self.partition_for(key))]

    @property
    def is_loading(self) -> bool:
        return any(status is PartitionStatus.LOADING for status in self._status.values())
