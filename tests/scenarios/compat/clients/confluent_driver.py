"""The compatibility operations through confluent-kafka (librdkafka)."""

from __future__ import annotations

import logging
import uuid

from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

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
)

LIBRDKAFKA_LOG = logging.getLogger("librdkafka")


def error_code(exc: KafkaException) -> int | None:
    error = exc.args[0] if exc.args else None
    return error.code() if isinstance(error, KafkaError) else None


class ConfluentDriver(DriverSettings):
    name = "confluent-kafka"

    def base_config(self) -> dict[str, object]:
        return {
            "bootstrap.servers": self.bootstrap,
            "socket.timeout.ms": int(self.timeout_s * 1000),
            # Through Python logging, so pytest captures librdkafka's complaints instead of printing them to stderr.
            "logger": LIBRDKAFKA_LOG,
        }

    def admin(self) -> AdminClient:
        return AdminClient(self.base_config())

    def create_topic(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        # The admin handle must outlive its futures: destroying it fails them.
        admin = self.admin()
        futures = admin.create_topics(
            [NewTopic(topic, num_partitions=partitions, replication_factor=1, config=configs or {})],
            operation_timeout=self.timeout_s,
            request_timeout=self.timeout_s,
        )
        try:
            futures[topic].result(timeout=self.timeout_s)
        except KafkaException as exc:
            raise ClientOperationError(error_code(exc), str(exc)) from exc

    def producer(self, codec: Codec = "none", **extra: object) -> Producer:
        return Producer(
            {
                **self.base_config(),
                "acks": "all",
                "enable.idempotence": True,
                "compression.type": codec,
                "linger.ms": 20,
                "message.timeout.ms": int(self.timeout_s * 1000),
                **({"message.max.bytes": self.max_request_bytes} if self.max_request_bytes else {}),
                **extra,
            }
        )

    def produce(
        self,
        topic: str,
        records: list[OutgoingRecord],
        *,
        codec: Codec = "none",
        partition: int | None = None,
        flush_every: int | None = None,
    ) -> list[Placement]:
        """``flush_every`` ends a batch after that many records (one producer, several batches)."""
        producer = self.producer(codec)
        placements: list[Placement | None] = [None] * len(records)
        failures: list[tuple[int, KafkaError]] = []

        def on_delivery(index: int):
            def report(err: KafkaError | None, msg) -> None:
                if err is not None:
                    failures.append((index, err))
                else:
                    placements[index] = Placement(msg.partition(), msg.offset())

            return report

        for index, record in enumerate(records):
            kwargs: dict[str, object] = {"partition": partition} if partition is not None else {}
            producer.produce(
                topic,
                key=record.key,
                value=record.value,
                headers=list(record.headers),
                timestamp=record.timestamp_ms,
                on_delivery=on_delivery(index),
                **kwargs,
            )
            producer.poll(0)
            if flush_every and (index + 1) % flush_every == 0:
                producer.flush(self.timeout_s)
        remaining = producer.flush(self.timeout_s)
        if failures:
            index, err = failures[0]
            raise ClientOperationError(err.code(), f"{len(failures)} records failed, first #{index}: {err}")
        if remaining or any(p is None for p in placements):
            raise ClientOperationError(None, f"{remaining} records still undelivered after {self.timeout_s}s")
        return [p for p in placements if p is not None]

    def consumer(self, reset: ResetPolicy = "error", **extra: object) -> Consumer:
        return Consumer(
            {
                **self.base_config(),
                # A group id is required by the library; no group is joined because partitions are assigned.
                "group.id": f"assign-only-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": reset,
                "fetch.wait.max.ms": 100,
                **extra,
            }
        )

    def consume(
        self, topic: str, start: dict[int, int], end: dict[int, int], *, reset: ResetPolicy = "error"
    ) -> list[ConsumedRecord]:
        consumer = self.consumer(reset)
        try:
            consumer.assign([TopicPartition(topic, p, offset) for p, offset in start.items()])
            return self._read_until(consumer, end)
        finally:
            consumer.close()

    def _read_until(self, consumer: Consumer, end: dict[int, int]) -> list[ConsumedRecord]:
        read = ReadUntil(end, self.timeout_s)
        while read.wanting():
            for msg in consumer.consume(num_messages=1000, timeout=0.2):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._AUTO_OFFSET_RESET:
                        raise OffsetOutOfRangeReported(msg.partition(), str(err))
                    raise ClientOperationError(err.code(), str(err))
                ts_type, ts = msg.timestamp()
                read.add(
                    ConsumedRecord(
                        partition=msg.partition(),
                        offset=msg.offset(),
                        key=msg.key(),
                        value=msg.value(),
                        headers=tuple(msg.headers() or ()),
                        timestamp_ms=ts,
                        create_time=ts_type == TIMESTAMP_CREATE_TIME,
                    )
                )
        return read.records

    def offset_for_time(self, topic: str, partition: int, timestamp_ms: int) -> TimestampLookup | None:
        consumer = self.consumer()
        try:
            (found,) = consumer.offsets_for_times(
                [TopicPartition(topic, partition, timestamp_ms)], timeout=self.timeout_s
            )
        finally:
            consumer.close()
        if found.error is not None:
            raise ClientOperationError(found.error.code(), str(found.error))
        # librdkafka reports "no such record" as the logical end offset -1 and does not expose the timestamp.
        return None if found.offset < 0 else TimestampLookup(found.offset, None)

    def delete_records(self, topic: str, partition: int, before_offset: int) -> int:
        tp = TopicPartition(topic, partition, before_offset)
        admin = self.admin()
        futures = admin.delete_records([tp], request_timeout=self.timeout_s, operation_timeout=self.timeout_s)
        try:
            (future,) = futures.values()
            return future.result(timeout=self.timeout_s).low_watermark
        except KafkaException as exc:
            raise ClientOperationError(error_code(exc), str(exc)) from exc

    def log_start_offset(self, topic: str, partition: int) -> int:
        consumer = self.consumer()
        try:
            low, _high = consumer.get_watermark_offsets(
                TopicPartition(topic, partition), timeout=self.timeout_s, cached=False
            )
        finally:
            consumer.close()
        return low
