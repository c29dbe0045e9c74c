"""``__consumer_offsets`` as the group coordinator uses it: create, append, read back.

:class:`OffsetsTopic` is the narrow interface the coordinator depends on, so
its unit tests can use an in-memory log. :class:`BrokerOffsetsTopic` is the
real one: it creates the topic through the topic manager (compacted, with
``offsets.topic.*`` settings), appends through the partition's produce path
as the coordinator (batch validation, offset assignment, the producer-epoch
and transaction checks, fetch wake-ups), and reads the partition's log back
batch by batch when loading.

Offsets committed inside a transaction are written as one transactional
batch of the committing producer (its id and epoch, no sequence); the
transaction coordinator later ends it with a COMMIT or ABORT marker in the
same partition, which is how a reload learns the outcome.

An append either lands completely or raises :class:`KafkaError` with the
code the storage layer reported; the coordinator only changes its cache
after a successful append.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterator, Protocol, Sequence

from broker_core.cluster.errors import TopicExistsError, UnknownTopicError
from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC
from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.protocol.errors import ErrorCode, KafkaError
from broker_core.records import NO_SEQUENCE, DecodedBatch, Record, build_batch, iter_decoded_batches
from broker_core.server.errors import error_code_for
from broker_core.server.topic_manager import TopicRequest
from broker_core.storage.producer_state import AppendOrigin

logger = logging.getLogger(__name__)

# One key/value pair to write; a value of None is a tombstone.
KeyValue = tuple[bytes, bytes | None]


@dataclass(frozen=True)
class TxnProducer:
    """The transactional producer a batch of offsets is written for."""

    producer_id: int
    producer_epoch: int


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


class BrokerOffsetsTopic:
    """The real topic, on this broker's metadata store, topic manager and replicas."""

    def __init__(self, *, store, topics, replicas, config: GroupConfig) -> None:
        self._store = store  # broker_core.cluster.metadata_store.MetadataStore
        self._topics = topics  # broker_core.server.topic_manager.TopicManager
        self._replicas = replicas  # broker_core.server.replica_manager.ReplicaManager
        self._config = config

    def partition_count(self) -> int | None:
        try:
            return self._store.get_topic(CONSUMER_OFFSETS_TOPIC).partition_count
        except UnknownTopicError:
            return None

    def create(self) -> int:
        existing = self.partition_count()
        if existing is not None:
            return existing
        config = self._config
        request = TopicRequest(
            name=CONSUMER_OFFSETS_TOPIC,
            num_partitions=config.offsets_topic_partitions,
            replication_factor=config.offsets_topic_replication_factor,
            configs={
                "cleanup.policy": "compact",
                "segment.bytes": str(config.offsets_topic_segment_bytes),
                "compression.type": "producer",
            },
        )
        try:
            self._topics.create_topic(request)
        except TopicExistsError:
            pass
        except Exception as exc:
            # Kafka answers COORDINATOR_NOT_AVAILABLE until the topic can exist (too few brokers, ...).
            logger.warning("cannot create %s yet: %s", CONSUMER_OFFSETS_TOPIC, exc)
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{CONSUMER_OFFSETS_TOPIC}: {exc}") from exc
        count = self.partition_count()
        if count is None:
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{CONSUMER_OFFSETS_TOPIC} was not created")
        logger.info("created %s with %d partition(s)", CONSUMER_OFFSETS_TOPIC, count)
        return count

    def led_partitions(self) -> list[int]:
        count = self.partition_count() or 0
        return [p for p in range(count) if self._replicas.get(CONSUMER_OFFSETS_TOPIC, p) is not None]

    def append(
        self, partition: int, records: Sequence[KeyValue], timestamp_ms: int, *, producer: TxnProducer | None = None
    ) -> int:
        leader = self._replicas.get(CONSUMER_OFFSETS_TOPIC, partition)
        if leader is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{CONSUMER_OFFSETS_TOPIC}-{partition} is not led here")
        entries = [Record(i, timestamp_ms, key, value) for i, (key, value) in enumerate(records)]
        if producer is None:
            batch = build_batch(entries)
        else:
            batch = build_batch(
                entries,
                producer_id=producer.producer_id,
                producer_epoch=producer.producer_epoch,
                base_sequence=NO_SEQUENCE,
                is_transactional=True,
            )
        try:
            # As the coordinator: the producer's epoch and open transaction are checked, sequences are not.
            result = leader.append_records(batch, origin=AppendOrigin.COORDINATOR)
        except Exception as exc:
            raise KafkaError(error_code_for(exc, where="__consumer_offsets append"), str(exc)) from exc
        self._replicas.notify_append(leader)
        return result.base_offset

    def read(self, partition: int) -> Iterator[DecodedBatch]:
        leader = self._replicas.get(CONSUMER_OFFSETS_TOPIC, partition)
        if leader is None:
            return
        log = leader.log
        position = log.log_start_offset
        end = leader.high_watermark
        while position < end:
            chunk = log.read(position, self._config.offsets_load_buffer_size, max_offset=end).read_bytes()
            if not chunk:
                return
            for batch in iter_decoded_batches(chunk):
                if batch.header.next_offset > position:
                    yield batch
                position = max(position, batch.header.next_offset)
