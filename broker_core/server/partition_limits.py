"""How many partitions the cluster and each broker may hold (Kafka's KIP-578 limits).

``max.partitions`` bounds the partitions of all topics together (cluster-wide
in a cluster); ``max.broker.partitions`` bounds the partition replicas one
broker hosts. A partition keeps no file open between uses: segment files are
opened when read or written and the least recently used are closed past
``log.max.open.files`` (``broker_core/storage/open_files.py``), so the
open-file limit does not bound the partition count. It bounds that cap
instead: the storage gets what ``RLIMIT_NOFILE`` leaves after a reserve for
connections (:func:`segment_file_cap`), and a limit that cannot even hold the
reserve and the smallest cap leaves no room for partitions at all. Brokers of
a cluster are taken to run with the same limit.

Every CreateTopics, CreatePartitions and auto-creation is checked twice,
before anything is written:

* :meth:`PartitionLimits.check_count`, by arithmetic alone, before a replica
  assignment exists, so an absurd count (2^31-1) is refused without building
  a structure per partition;
* :meth:`PartitionLimits.check_assignment`, on the placement computed or
  given, per broker.

A count that can never be valid on its own answers INVALID_PARTITIONS; one
that would take the cluster or a broker over its limit POLICY_VIOLATION. The
messages name the property and the numbers. Counts ≤ 0 and replication
factors the live brokers cannot host are left to the existing checks.
"""

from __future__ import annotations

import resource
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.storage.open_files import MIN_CAPACITY
from spate.protocol.errors import ErrorCode, KafkaError

MAX_PARTITIONS = "max.partitions"
MAX_BROKER_PARTITIONS = "max.broker.partitions"
LOG_MAX_OPEN_FILES = "log.max.open.files"
# Descriptors a partition holds between uses: none (its segment files share log.max.open.files).
FILES_PER_PARTITION = 0
# Open files kept for connections, checkpoints and the metadata store.
MAX_RESERVED_FILES = 1024


def open_file_limit() -> int | None:
    """This process's soft limit on open files; None when unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit() -> int | None:
    """Take the hard limit on open files as the soft one (service units set LimitNOFILE for Kafka the same
    way); returns the limit now in force, None when unlimited. A limit that cannot be changed stays."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    return open_file_limit()


def _reserve(limit: int) -> int:
    return min(MAX_RESERVED_FILES, limit // 4)


def segment_file_cap(configured: int, limit: int | None) -> int:
    """The descriptors segment files may hold: ``log.max.open.files``, lowered to what ``limit`` leaves
    after the reserve (never below the storage's minimum)."""
    if limit is None:
        return max(configured, MIN_CAPACITY)
    return max(MIN_CAPACITY, min(configured, limit - _reserve(limit)))


def partitions_within_open_files(limit: int | None) -> int | None:
    """How many partitions ``limit`` open files can hold next to the reserve; None when not bounded by files.

    Partitions hold no descriptors of their own, so any count fits once the
    limit holds the reserve and the smallest segment file cap; below that, none does.
    """
    if limit is None:
        return None
    if limit - _reserve(limit) < MIN_CAPACITY:
        return 0
    if FILES_PER_PARTITION == 0:
        return None
    return (limit - _reserve(limit) - MIN_CAPACITY) // FILES_PER_PARTITION


@dataclass(frozen=True)
class PartitionCounts:
    """What exists already: partitions of all topics, and partition replicas per broker."""

    total: int = 0
    per_broker: Mapping[int, int] = field(default_factory=dict)

    @classmethod
    def of(cls, assignments: Iterable[Iterable[Sequence[int]]]) -> PartitionCounts:
        """Counted from each topic's replica lists."""
        total, per_broker = 0, Counter[int]()
        for replica_lists in assignments:
            for replicas in replica_lists:
                total += 1
                per_broker.update(replicas)
        return cls(total, dict(per_broker))

    def plus(self, other: PartitionCounts) -> PartitionCounts:
        merged = Counter(self.per_broker)
        merged.update(other.per_broker)
        return PartitionCounts(self.total + other.total, dict(merged))


@dataclass(frozen=True)
class PartitionLimits:
    max_partitions: int
    max_broker_partitions: int
    # Partitions the open-file limit holds per broker (None: unlimited).
    open_file_capacity: int | None = None

    @classmethod
    def from_config(cls, config: BrokerConfig, *, file_limit: int | None) -> PartitionLimits:
        """The limits of ``config`` on brokers allowed ``file_limit`` open files (None: unlimited)."""
        return cls(
            config.get_int(MAX_PARTITIONS),
            config.get_int(MAX_BROKER_PARTITIONS),
            partitions_within_open_files(file_limit),
        )

    @property
    def per_broker(self) -> int:
        """The per-broker limit in force."""
        if self.open_file_capacity is None:
            return self.max_broker_partitions
        return min(self.max_broker_partitions, self.open_file_capacity)

    def _broker_limit_text(self) -> str:
        text = f"{MAX_BROKER_PARTITIONS}={self.max_broker_partitions}"
        if self.per_broker < self.max_broker_partitions:
            text += (f" (lowered to {self.per_broker} by the open-file limit, which cannot hold the "
                     f"{MIN_CAPACITY} segment files the storage needs next to {MAX_RESERVED_FILES} reserved)")
        return text

    def check_topic_size(self, topic: str, count: int) -> None:
        """Refuse a topic of ``count`` partitions that no cluster under ``max.partitions`` could hold."""
        if count > self.max_partitions:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"topic {topic}: {count} partitions are more than {MAX_PARTITIONS}={self.max_partitions} "
                "allows for all topics together",
            )

    def check_count(self, topic: str, added: int, replication_factor: int, existing: PartitionCounts,
                    brokers: Sequence[int]) -> None:
        """Refuse adding ``added`` partitions of ``replication_factor`` replicas, by arithmetic alone."""
        if added <= 0 or replication_factor <= 0 or replication_factor > len(set(brokers)):
            return  # the existing checks answer these with Kafka's errors
        self._check_total(topic, added, existing)
        free = sum(max(0, self.per_broker - existing.per_broker.get(b, 0)) for b in set(brokers))
        if added * replication_factor > free:
            raise KafkaError(
                ErrorCode.POLICY_VIOLATION,
                f"topic {topic}: {added} partitions of {replication_factor} replica(s) need "
                f"{added * replication_factor} partition replicas; the {len(set(brokers))} live broker(s) "
                f"can host {free} more under {self._broker_limit_text()}",
            )

    def check_assignment(self, topic: str, assignment: Mapping[int, Sequence[int]],
                         existing: PartitionCounts) -> None:
        """Refuse a placement of new partitions that takes the cluster or one broker over its limit."""
        self._check_total(topic, len(assignment), existing)
        added = Counter[int]()
        for replicas in assignment.values():
            added.update(replicas)
        for broker, count in sorted(added.items()):
            hosted = existing.per_broker.get(broker, 0)
            if hosted + count > self.per_broker:
                raise KafkaError(
                    ErrorCode.POLICY_VIOLATION,
                    f"topic {topic}: broker {broker} hosts {hosted} partition replicas; {count} more would "
                    f"take it to {hosted + count}, above {self._broker_limit_text()}",
                )

    def _check_total(self, topic: str, added: int, existing: PartitionCounts) -> None:
        self.check_topic_size(topic, added)
        if existing.total + added > self.max_partitions:
            raise KafkaError(
                ErrorCode.POLICY_VIOLATION,
                f"topic {topic}: {existing.total} partitions exist; {added} more would make "
                f"{existing.total + added}, above {MAX_PARTITIONS}={self.max_partitions}",
            )
