"""The compatibility operations through aiokafka (asyncio).

Each operation runs its own event loop so the tests stay synchronous; every
await is bounded by ``timeout_s`` so a silent broker fails the test quickly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic, RecordsToDelete
from aiokafka.errors import KafkaError, OffsetOutOfRangeError, for_code

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

T = TypeVar("T")


def error_code(exc: KafkaError) -> int | None:
    return getattr(exc, "errno", None)


class AiokafkaDriver(DriverSettings):
    name = "aiokafka"

    def run(self, operation: Awaitable[T]) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(operation, self.timeout_s)

        try:
            return asyncio.run(bounded())
        except OffsetOutOfRangeError as exc:
            raise OffsetOutOfRangeReported.from_python_client(exc) from exc
        except KafkaError as exc:
            raise ClientOperationError(error_code(exc), repr(exc)) from exc

    async def _admin(self) -> AIOKafkaAdminClient:
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=self.timeout_ms)
        await admin.start()
        return admin

    def create_topic(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> None:
        async def create() -> None:
            admin = await self._admin()
            try:
                response = await admin.create_topics(
                    [NewTopic(topic, partitions, 1, topic_configs=configs or {})], timeout_ms=self.timeout_ms
                )
            finally:
                await admin.close()
            # The admin client hands back the raw response; errors are per topic inside it.
            for name, code, *_ in response.topic_errors:
                if code != 0:
                    raise for_code(code)(f"creating {name}")

        self.run(create())

    def producer(self, codec: Codec = "none", **extra: object) -> AIOKafkaProducer:
        return AIOKafkaProducer(**self.python_client_producer_options(codec), max_batch_size=64 * 1024, **extra)

    def produce(
        self, topic: str, records: list[OutgoingRecord], *, codec: Codec = "none", partition: int | None = None
    ) -> list[Placement]:
        async def send_all() -> list[Placement]:
            producer = self.producer(codec)
            try:
                await producer.start()
                futures = [
                    await producer.send(
                        topic,
                        value=record.value,
                        key=record.key,
                        partition=partition,
                        timestamp_ms=record.timestamp_ms,
                        headers=list(record.headers),
                    )
                    for record in records
                ]
                results = await asyncio.gather(*futures)
            finally:
                await producer.stop()
            return [Placement(metadata.partition, metadata.offset) for metadata in results]

        return self.run(send_all())

    def consumer(self, reset: ResetPolicy = "error", **extra: object) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(**self.python_client_consumer_options(reset), **extra)

    def consume(
        self, topic: str, start: dict[int, int], end: dict[int, int], *, reset: ResetPolicy = "error"
    ) -> list[ConsumedRecord]:
        async def read() -> list[ConsumedRecord]:
            consumer = self.consumer(reset)
            try:
                await consumer.start()
                partitions = {p: TopicPartition(topic, p) for p in start}
                consumer.assign(list(partitions.values()))
                for p, offset in start.items():
                    consumer.seek(partitions[p], offset)
                return await self._read_until(consumer, end)
            finally:
                await consumer.stop()

        return self.run(read())

    async def _read_until(self, consumer: AIOKafkaConsumer, end: dict[int, int]) -> list[ConsumedRecord]:
        read = ReadUntil(end, self.timeout_s)
        while read.wanting():
            batches = await consumer.getmany(timeout_ms=200, max_records=5000)
            for tp, messages in batches.items():
                for msg in messages:
                    read.add(consumed_from_python_client(tp.partition, msg))
        return read.records

    def offset_for_time(self, topic: str, partition: int, timestamp_ms: int) -> TimestampLookup | None:
        async def lookup() -> TimestampLookup | None:
            consumer = self.consumer()
            tp = TopicPartition(topic, partition)
            try:
                await consumer.start()
                found = (await consumer.offsets_for_times({tp: timestamp_ms}))[tp]
            finally:
                await consumer.stop()
            return None if found is None else TimestampLookup(found.offset, found.timestamp)

        return self.run(lookup())

    def delete_records(self, topic: str, partition: int, before_offset: int) -> int:
        async def delete() -> int:
            admin = await self._admin()
            tp = TopicPartition(topic, partition)
            try:
                result = await admin.delete_records({tp: RecordsToDelete(before_offset)}, timeout_ms=self.timeout_ms)
            finally:
                await admin.close()
            return result[tp]

        return self.run(delete())

    def log_start_offset(self, topic: str, partition: int) -> int:
        async def earliest() -> int:
            consumer = self.consumer()
            tp = TopicPartition(topic, partition)
            try:
                await consumer.start()
                return (await consumer.beginning_offsets([tp]))[tp]
            finally:
                await consumer.stop()

        return self.run(earliest())
