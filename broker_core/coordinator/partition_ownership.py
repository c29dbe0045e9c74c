"""Which partitions of a coordinator's internal topic this broker owns, at which epoch, and whether each is loaded.

A key (a group id, a transactional id) lives on partition
``partition_for(key)``; the coordinator answers for it while this broker
leads that partition. An owned partition is LOADING until its records have
been replayed, then LOADED; one whose log could not be read stays FAILED
rather than serve keys with missing state. Each status has Kafka's answer
for the keys on that partition.

Ownership follows the partition's leadership (Kafka's onElection /
onResignation). Each change carries the partition's leader epoch, which is
also the coordinator epoch written into transaction markers. Epochs never go
back: an election or resignation older than the newest epoch seen for the
partition is stale (it was overtaken on its way here) and changes nothing,
and a load asked for at one epoch is dropped when the partition has moved
to another meanwhile, so it can never overwrite newer state.
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


class Election(enum.Enum):
    """What becoming leader of a partition at some epoch asks of the coordinator."""

    STALE = "stale"  # older than an epoch already seen: ignored
    KEPT = "kept"  # already owned (loaded or loading): the epoch is recorded, the state stays
    LOAD = "load"  # newly owned (or owned again): its records must be replayed


class OwnedPartitions:
    """The owned partitions of one internal topic, their statuses and epochs; the topic has ``partition_count``."""

    def __init__(self, partition_count: int) -> None:
        self.partition_count = partition_count
        self._status: dict[int, PartitionStatus] = {}
        # The newest leader epoch seen per partition, kept after resigning so late news can be recognised.
        self._epochs: dict[int, int] = {}

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.partition_count)

    def status(self, partition: int) -> PartitionStatus | None:
        """None while this broker does not own ``partition``."""
        return self._status.get(partition)

    def set_status(self, partition: int, status: PartitionStatus) -> None:
        self._status[partition] = status

    def epoch(self, partition: int) -> int | None:
        """The newest leader epoch seen for ``partition`` (owned or not), None if none yet."""
        return self._epochs.get(partition)

    def elect(self, partition: int, epoch: int, *, reload_owned: bool) -> Election:
        """This broker leads ``partition`` at ``epoch``.

        A partition already loaded keeps its state at a newer epoch unless
        ``reload_owned`` (the transaction coordinator reloads, as Kafka's does;
        the group coordinator keeps its groups and their parked requests); one
        still loading at an older epoch is loaded again at this one. The same
        epoch again is a duplicate and changes nothing.
        """
        current = self._epochs.get(partition)
        if current is not None and epoch < current:
            return Election.STALE
        status = self._status.get(partition)
        self._epochs[partition] = epoch
        if status is PartitionStatus.LOADED and (epoch == current or not reload_owned):
            return Election.KEPT
        if status is PartitionStatus.LOADING and epoch == current:
            return Election.KEPT
        # A load still pending at an older epoch is superseded: it is asked for again at this one.
        self._status[partition] = PartitionStatus.LOADING
        return Election.LOAD

    def is_loading_at(self, partition: int, epoch: int) -> bool:
        """Whether a load asked for at ``epoch`` is still wanted (nothing moved the partition since)."""
        return self._status.get(partition) is PartitionStatus.LOADING and self._epochs.get(partition) == epoch

    def resign(self, partition: int, epoch: int | None) -> bool:
        """This broker stopped leading ``partition`` (another leads it at ``epoch``; None: unknown, as
        for a deleted replica). False, changing nothing, when a newer election has already been seen."""
        current = self._epochs.get(partition)
        if epoch is not None and current is not None and epoch < current:
            return False
        if epoch is not None:
            self._epochs[partition] = epoch
        self._status.pop(partition, None)
        return True

    def coordinator_error(self, key: str) -> ErrorCode:
        """NONE when this broker answers for ``key`` now, else the code that says why not."""
        return _ANSWERS[self._status.get(self.partition_for(key))]

    @property
    def is_loading(self) -> bool:
        return any(status is PartitionStatus.LOADING for status in self._status.values())

    def owned(self) -> list[int]:
        return sorted(self._status)
