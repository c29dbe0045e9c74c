"""``__consumer_offsets`` as the group coordinator uses it: create, append, read back.

:class:`OffsetsTopic` is the narrow interface the coordinator depends on, so
its unit tests can use an in-memory log. :class:`BrokerOffsetsTopic` is the
real one: the broker's internal topic (``coordinator/internal_topic.py``)
with ``offsets.topic.*`` settings.

Offsets committed inside a transaction are written as one transactional
batch of the committing producer (its id and epoch, no sequence); the
transaction coordinator later ends it with a COMMIT or ABORT marker in the
same partition, which is how a reload learns the outcome.

An append either lands completely or raises :class:`KafkaError` with the
code the storage layer reported; the coordinator only changes its cache
after a successful append.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC
from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.internal_topic import BrokerInternalTopic, InternalTopicSpec, KeyValue, TxnProducer
from spate.records import DecodedBatch

__all__ = ["BrokerOffsetsTopic", "KeyValue", "OffsetsTopic", "TxnProducer"]


class OffsetsTopic(Protocol):
    def partition_count(self) -> int | None:
        """Partitions of the topic, or None while it does not exist."""
        ...

    def create(self) -> int:
        """Create the topic if needed; returns its partition count."""
        ...

    def led_partitions(self) -> list[int]:
        """The partitions this broker leads, whose groups it coordinates."""
        ...

    def append(
        self, partition: int, records: Sequence[KeyValue], timestamp_ms: int, *, producer: TxnProducer | None = None
    ) -> int:
        """Append the records as one batch (transactional for ``producer`` if given); returns its base offset.

        KafkaError if nothing was written.
        """
        ...

    def read(self, partition: int) -> Iterator[DecodedBatch]:
        """Every batch of the partition, oldest first, transaction markers included."""
        ...


class BrokerOffsetsTopic(BrokerInternalTopic):
    """The real topic, on this broker's metadata store, topic manager and replicas."""

    def __init__(self, *, store, topics, replicas, config: GroupConfig) -> None:
        spec = InternalTopicSpec(
            name=CONSUMER_OFFSETS_TOPIC,
            partitions=config.offsets_topic_partitions,
            replication_factor=config.offsets_topic_replication_factor,
            configs={
                "cleanup.policy": "compact",
                "segment.bytes": str(config.offsets_topic_segment_bytes),
                "compression.type": "producer",
            },
            load_buffer_size=config.offsets_load_buffer_size,
        )
        super().__init__(spec, store=store, topics=topics, replicas=replicas)

    def read(self, partition: int) -> Iterator[DecodedBatch]:
        return self.read_batches(partition)
