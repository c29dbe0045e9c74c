"""``__consumer_offsets`` as the group coordinator uses it: create, append, read back.

:class:`OffsetsTopic` is the narrow interface the coordinator depends on, so
its unit tests can use an in-memory log; the broker's own internal topic
(``broker_core.server.internal_topic_adapter``) is the real one, made with
:attr:`GroupConfig.offsets_topic_spec`.

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

from broker_core.coordinator.internal_topic import KeyValue, TxnProducer
from spate.records import DecodedBatch

__all__ = ["KeyValue", "OffsetsTopic", "TxnProducer"]


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

    def leader_epoch(self, partition: int) -> int:
        """The epoch of this broker's leadership of ``partition``."""
        ...

    def append(
        self, partition: int, records: Sequence[KeyValue], timestamp_ms: int, *, producer: TxnProducer | None = None
    ) -> int:
        """Append the records as one batch (transactional for ``producer`` if given); returns its base offset.

        KafkaError if nothing was written.
        """
        ...

    def read_batches(self, partition: int) -> Iterator[DecodedBatch]:
        """Every batch of the partition, oldest first, transaction markers included."""
        ...
