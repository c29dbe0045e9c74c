"""The compatibility operations through kafka-python (pure Python)."""

from __future__ import annotations

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError, OffsetOutOfRangeError

from tests.scenarios.compat.clients.model import (
    ClientOperationError,
    Codec,
    ConsumedRecord,
    DriverSettings,
    OffsetOutOfRangeReported,
    OutgoingRecord,
    Placement,
    ReadUntil,
    ResetPolicy,
    TimestampLookup,
    consumed_from_python_client,
)


def error_code(exc: KafkaError) -> int | None:
    return getattr(exc, "errno", None)


class KafkaPythonDriver(DriverSettings):
    name = "kafka-python"

    def admin(self) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=self.timeout_ms)

    def create_topic(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        admin = self.admin()
        try:
            admin.create_topics(
                {topic: {"num_partitions": partitions, "replication_factor": 1, "configs": configs or {}}},
                timeout_ms=self.timeout_ms,
            )
        except KafkaError as exc:
            raise ClientOperationError(error_code(exc), repr(exc)) from exc
        finally:
            admin.close()

    def producer(self, codec: Codec = "none", **extra: object) -> KafkaProducer:
        return KafkaProducer(
            **self.python_client_producer_options(codec),
            batch_size=64 * 1024,
            delivery_timeout_ms=self.timeout_ms + 1000,
            max_block_ms=self.timeout_ms,
            **extra,
        )

    def produce(
        self, topic: str, records: list[OutgoingRecord], *, codec: Codec = "none", partition: int | None = None
    ) -> list[Placement]:
        producer = self.producer(codec)
        try:
            futures = [
                producer.send(
                    topic,
                    key=record.key,
                    value=record.value,
                    headers=list(record.headers),
                    timestamp_ms=record.timestamp_ms,
                    partition=partition,
                )
                for record in records
            ]
            producer.flush(timeout=self.timeout_s)
            placements = []
            for future in futures:
                try:
                    metadata = future.get(timeout=self.timeout_s)
                except KafkaError as exc:
                    raise ClientOperationError(error_code(exc), repr(exc)) from exc
                placements.append(Placement(metadata.partition, metadata.offset))
            return placements
        finally:
            producer.close(timeout=self.timeout_s)

    def consumer(self, reset: ResetPolicy = "error", **extra: object) -> KafkaConsumer:
        return KafkaConsumer(**self.python_client_consumer_options(reset), **extra)

    def consume(
        self, topic: str, start: dict[int, int], end: dict[int, int], *, reset: ResetPolicy = "error"
    ) -> list[ConsumedRecord]:
        consumer = self.consumer(reset)
        try:
            partitions = {p: TopicPartition(topic, p) for p in start}
            consumer.assign(list(partitions.values()))
            for p, offset in start.items():
                consumer.seek(partitions[p], offset)
            return self._read_until(consumer, end)
        finally:
            consumer.close()

    def _read_until(self, consumer: KafkaConsumer, end: dict[int, int]) -> list[ConsumedRecord]:
        read = ReadUntil(end, self.timeout_s)
        while read.wanting():
            try:
                batches = consumer.poll(timeout_ms=200, max_records=5000)
            except OffsetOutOfRangeError as exc:
                raise OffsetOutOfRangeReported.from_python_client(exc) from exc
            except KafkaError as exc:
                raise ClientOperationError(error_code(exc), repr(exc)) from exc
            for tp, messages in batches.items():
                for msg in messages:
                    read.add(consumed_from_python_client(tp.partition, msg))
        return read.records

    def offset_for_time(self, topic: str, partition: int, timestamp_ms: int) -> TimestampLookup | None:
        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        try:
            found = consumer.offsets_for_times({tp: timestamp_ms}, timeout_ms=self.timeout_ms)[tp]
        finally:
            consumer.close()
        return None if found is None else TimestampLookup(found.offset, found.timestamp)

    def delete_records(self, topic: str, partition: int, before_offset: int) -> int:
        admin = self.admin()
        tp = TopicPartition(topic, partition)
        try:
            result = admin.delete_records({tp: before_offset}, timeout_ms=self.timeout_ms)
        except KafkaError as exc:
            raise ClientOperationError(error_code(exc), repr(exc)) from exc
        finally:
            admin.close()
        return result[tp]["low_watermark"]

    def log_start_offset(self, topic: str, partition: int) -> int:
        consumer = self.consumer()
        tp = TopicPartition(topic, partition)
        try:
            return consumer.beginning_offsets([tp], timeout_ms=self.timeout_ms)[tp]
        finally:
            consumer.close()
