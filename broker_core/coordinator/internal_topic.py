"""An internal topic a coordinator keeps its state in (``__consumer_offsets``, ``__transaction_state``).

This is the coordinators' side: what they need of their topic
(:class:`CoordinatorTopic`) and what it is made of (:class:`InternalTopicSpec`).
The coordinator owns the keys that hash to the partitions this broker leads.
It creates the topic on first use (compacted, with the coordinator's
settings), appends to it and reads a partition back batch by batch when it
takes the partition over. The broker's implementation, on its own topics
and partitions, is ``broker_core.server.internal_topic_adapter``.

An append either lands completely or raises :class:`KafkaError` with the
code the storage layer reported, so the coordinator changes its cache only
after a successful write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Protocol, Sequence

from spate.records import DecodedBatch

# One key/value pair to write; a value of None is a tombstone.
KeyValue = tuple[bytes, bytes | None]


@dataclass(frozen=True)
class TxnProducer:
    """The transactional producer a batch is written for (offsets committed inside a transaction)."""

    producer_id: int
    producer_epoch: int


class CoordinatorTopic(Protocol):
    def partition_count(self) -> int | None:
        """Partitions of the topic, or None while it does not exist."""
        ...

    def create(self) -> int:
        """Create the topic if needed; returns its partition count."""
        ...

    def led_partitions(self) -> list[int]:
        """The partitions this broker leads, whose keys it coordinates."""
        ...

    def leader_epoch(self, partition: int) -> int:
        """The epoch of this broker's leadership of ``partition`` (the coordinator epoch)."""
        ...

    def append(self, partition: int, records: Sequence[KeyValue], timestamp_ms: int) -> int:
        """Append the records as one batch; returns its base offset."""
        ...

    def read_batches(self, partition: int) -> Iterator[DecodedBatch]:
        """Every batch below the high watermark, oldest first."""
        ...


@dataclass(frozen=True)
class InternalTopicSpec:
    """What an internal topic is created with, and how much of it a load reads at a time."""

    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)
    load_buffer_size: int = 5 * 1024 * 1024
