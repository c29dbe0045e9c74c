"""A coordinator's internal topic on this broker: its metadata store, topic manager and partitions.

:class:`BrokerInternalTopic` is the broker's implementation of the
coordinators' :class:`~broker_core.coordinator.internal_topic.CoordinatorTopic`
(and of the group coordinator's ``OffsetsTopic``). It creates the topic on
first use through the topic manager (compacted, with the coordinator's
settings), appends through the partition's normal produce path (validation,
offset assignment, fetch wake-ups) and reads a partition back batch by
batch, up to its high watermark, when the coordinator takes it over.

An append either lands completely or raises :class:`KafkaError` with the
code the storage layer reported.

Nothing here assumes the topic's partitions are all led here: in a cluster
the topic is created through the admin path and the controller places its
partitions on the live brokers. Creation does not wait for them; until the
metadata knows the topic and its partitions have leaders, coordinator
lookups answer COORDINATOR_NOT_AVAILABLE and clients retry. Only the
partitions this broker leads are listed, appended to or read; reading one
it does not lead raises, so a coordinator never mistakes a partition it
cannot see for an empty one.
"""

from __future__ import annotations

import logging
from typing import Iterator, Sequence

from broker_core.cluster.errors import TopicExistsError, UnknownTopicError
from broker_core.cluster.metadata_store import MetadataStore
from broker_core.coordinator.internal_topic import InternalTopicSpec, KeyValue, TxnProducer
from broker_core.server.errors import error_code_for
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.topic_manager import TopicManager, TopicRequest
from broker_core.storage.producer_state import AppendOrigin
from spate.protocol.errors import ErrorCode, KafkaError
from spate.records import NO_SEQUENCE, DecodedBatch, Record, build_batch, iter_decoded_batches

logger = logging.getLogger(__name__)


class BrokerInternalTopic:
    def __init__(
        self, spec: InternalTopicSpec, *, store: MetadataStore, topics: TopicManager, replicas: ReplicaManager
    ) -> None:
        self.spec = spec
        self._store = store
        self._topics = topics
        self._replicas = replicas

    def partition_count(self) -> int | None:
        try:
            return self._store.get_topic(self.spec.name).partition_count
        except UnknownTopicError:
            return None

    def create(self) -> int:
        existing = self.partition_count()
        if existing is not None:
            return existing
        spec = self.spec
        request = TopicRequest(
            name=spec.name,
            num_partitions=spec.partitions,
            replication_factor=spec.replication_factor,
            configs=dict(spec.configs),
        )
        try:
            self._topics.create_topic(request)
        except TopicExistsError:
            pass
        except Exception as exc:
            # Kafka answers COORDINATOR_NOT_AVAILABLE until the topic can exist (too few brokers, ...).
            logger.warning("cannot create %s yet: %s", spec.name, exc)
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{spec.name}: {exc}") from exc
        count = self.partition_count()
        if count is None:
            # In a cluster the metadata learns of the new topic a moment later.
            raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{spec.name} is being created")
        logger.info("created %s with %d partition(s)", spec.name, count)
        return count

    def led_partitions(self) -> list[int]:
        count = self.partition_count() or 0
        return [p for p in range(count) if self._replicas.get(self.spec.name, p) is not None]

    def leader_epoch(self, partition: int) -> int:
        leader = self._replicas.get(self.spec.name, partition)
        return leader.leader_epoch if leader is not None else -1

    def append(
        self, partition: int, records: Sequence[KeyValue], timestamp_ms: int, *, producer: TxnProducer | None = None
    ) -> int:
        """Append the records as one batch (transactional for ``producer`` if given); returns its base offset."""
        leader = self._replicas.get(self.spec.name, partition)
        if leader is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{self.spec.name}-{partition} is not led here")
        entries = [Record(i, timestamp_ms, key, value) for i, (key, value) in enumerate(records)]
        if producer is None:
            batch = build_batch(entries)
        else:
            batch = build_batch(entries, producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
                                base_sequence=NO_SEQUENCE, is_transactional=True)
        try:
            # As the coordinator: a producer's epoch and open transaction are checked, sequences are not.
            result = leader.append_records(batch, origin=AppendOrigin.COORDINATOR)
        except Exception as exc:
            raise KafkaError(error_code_for(exc, where=f"{self.spec.name} append"), str(exc)) from exc
        self._replicas.notify_append(leader)
        return result.base_offset

    def read_batches(self, partition: int) -> Iterator[DecodedBatch]:
        leader = self._replicas.get(self.spec.name, partition)
        if leader is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{self.spec.name}-{partition} is not led here")
        log = leader.log
        position = log.log_start_offset
        end = leader.high_watermark
        while position < end:
            chunk = log.read(position, self.spec.load_buffer_size, max_offset=end).read_bytes()
            if not chunk:
                return
            for batch in iter_decoded_batches(chunk):
                if batch.header.next_offset > position:
                    yield batch
                position = max(position, batch.header.next_offset)
