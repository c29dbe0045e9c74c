"""What a consumer hands out: single records, whole batches as columns, or whole batches undecoded."""

from __future__ import annotations

from dataclasses import dataclass

from spate.records.batch import BatchHeader
from spate.records.record import Header, TimestampType
from spate.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """One record read from a partition.

    ``headers`` keeps the wire order and any repeated keys. ``leader_epoch``
    is the partition leader epoch stamped on the record's batch (-1 if none).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    leader_epoch: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class FetchedBatch:
    """Consecutive records of one partition as parallel column lists.

    Usually one RecordBatch from the log, minus any records below the
    consumer's position when a fetch started inside it. Control batches and
    the batches of aborted transactions (under ``read_committed``) never
    appear. ``next_offset`` is where the consumer continues after this batch;
    it can exceed ``offsets[-1] + 1`` when compaction removed the batch's last
    records. Every column has ``len(self)`` entries.
    """

    topic: str
    partition: int
    offsets: list[int]
    timestamps: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[tuple[Header, ...]]
    timestamp_type: TimestampType
    next_offset: int
    leader_epoch: int = -1

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def records(self) -> list[ConsumerRecord]:
        """The batch as one ConsumerRecord per row."""
        topic, partition, kind, epoch = self.topic, self.partition, self.timestamp_type, self.leader_epoch
        return [
            ConsumerRecord(topic, partition, offset, timestamp, kind, key, value, headers, epoch)
            for offset, timestamp, key, value, headers in zip(
                self.offsets, self.timestamps, self.keys, self.values, self.headers
            )
        ]


@dataclass(frozen=True, slots=True)
class RawBatch:
    """One RecordBatch (v2) of a partition as fetched: validated, filtered, not decoded.

    ``buffer[header.position:header.position + header.size]`` holds the
    batch in Kafka's wire format, for readers that decode it themselves (into
    Arrow columns, say). Its header, and its CRC unless ``check_crcs`` is
    off, have been checked; control batches and, under ``read_committed``,
    aborted transactions' batches never appear. Records below
    ``start_offset`` are not the reader's (a fetch that started inside the
    batch): skip them. ``next_offset`` is where the consumer continues after it.
    """

    topic: str
    partition: int
    buffer: bytes | bytearray | memoryview
    header: BatchHeader
    start_offset: int

    @property
    def position(self) -> int:
        return self.header.position

    @property
    def next_offset(self) -> int:
        return self.header.next_offset

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)
