"""Records produced by Spate's producer come back from Spate's consumer exactly as sent."""

from __future__ import annotations

import random
import time

import pytest

from spate.client import (
    Consumer,
    ErrorCode,
    KafkaError,
    Producer,
    TimestampType,
    TopicPartition,
    partition_for_key,
)
from tests.spate.client.conftest import (
    TANSU_IDEMPOTENCE_BUG,
    TANSU_LIST_OFFSETS_LATEST_BUG,
    TANSU_TOPIC_CONFIGS_IGNORED,
    assigned_consumer,
    consume,
    create_topic,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PARTITIONS = 3
RECORDS = 600


def sample(count: int, seed: int) -> list[dict]:
    """Keyed records with null, empty and binary values, repeated header keys and unordered timestamps."""
    rng = random.Random(seed)
    base = int(time.time() * 1000) - 3_600_000
    records = []
    for i in range(count):
        value = None if i % 11 == 0 else b"" if i % 11 == 1 else rng.randbytes(rng.randint(1, 400))
        headers = [("seq", str(i).encode()), ("seq", None)] if i % 5 == 0 else [("seq", str(i).encode())]
        records.append(
            {"key": f"key-{rng.randrange(40)}".encode(), "value": value, "headers": headers,
             "timestamp": base + rng.randrange(600_000)}
        )
    return records


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_every_codec_round_trips_keys_values_headers_and_timestamps(broker, topic_name, codec: str) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), PARTITIONS)
    sent = sample(RECORDS, seed=hash(codec) & 0xFFFF)
    with Producer(broker.bootstrap, **broker.producer_settings(compression_type=codec, batch_size=4096)) as producer:
        futures = [producer.send(topic, **record) for record in sent]
        producer.flush(30)
    placed = [f.result() for f in futures]
    with assigned_consumer(broker.bootstrap, topic, PARTITIONS) as consumer:
        got = consume(consumer, RECORDS)
    assert len(got) == RECORDS
    by_position = {(r.partition, r.offset): r for r in got}
    for record, where in zip(sent, placed):
        back = by_position[(where.partition, where.offset)]
        assert (back.key, back.value, back.timestamp) == (record["key"], record["value"], record["timestamp"])
        assert back.headers == tuple(record["headers"])
        assert back.timestamp_type == TimestampType.CREATE_TIME
        assert where.partition == partition_for_key(record["key"], PARTITIONS)
        assert where.timestamp == record["timestamp"]


def test_offsets_increase_in_send_order_within_each_partition(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), PARTITIONS)
    with Producer(broker.bootstrap, **broker.producer_settings(batch_size=1024)) as producer:
        futures = [producer.send(topic, str(i).encode(), key=str(i % 7).encode()) for i in range(500)]
        producer.flush(30)
    by_partition: dict[int, list[int]] = {}
    for future in futures:
        metadata = future.result()
        by_partition.setdefault(metadata.partition, []).append(metadata.offset)
    for offsets in by_partition.values():
        assert offsets == list(range(len(offsets)))


def test_poll_batches_returns_the_same_records_as_columns(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Producer(broker.bootstrap, **broker.producer_settings(batch_size=2048)) as producer:
        for i in range(300):
            producer.send(topic, f"v{i}".encode(), key=b"k", headers=[("i", str(i).encode())], timestamp=1_700_000_000_000 + i)
        producer.flush(30)
    with assigned_consumer(broker.bootstrap, topic, 1) as consumer:
        batches = []
        deadline = time.monotonic() + 20
        while sum(len(b) for b in batches) < 300 and time.monotonic() < deadline:
            batches.extend(consumer.poll_batches(timeout_ms=200))
        assert consumer.position(TopicPartition(topic, 0)) == 300
    assert len(batches) > 1, "a 2 KB batch size makes several batches"
    offsets = [o for b in batches for o in b.offsets]
    assert offsets == list(range(300))
    assert [v for b in batches for v in b.values] == [f"v{i}".encode() for i in range(300)]
    assert [t for b in batches for t in b.timestamps] == [1_700_000_000_000 + i for i in range(300)]
    assert [h for b in batches for h in b.headers] == [(("i", str(i).encode()),) for i in range(300)]
    assert all(b.next_offset == b.offsets[-1] + 1 for b in batches)


def test_poll_returns_at_most_max_records_and_continues_where_it_stopped(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        for i in range(50):
            producer.send(topic, str(i).encode())
    with assigned_consumer(broker.bootstrap, topic, 1) as consumer:
        seen = []
        deadline = time.monotonic() + 20
        while len(seen) < 50 and time.monotonic() < deadline:
            chunk = consumer.poll(timeout_ms=200, max_records=7)
            assert len(chunk) <= 7
            seen.extend(r.offset for r in chunk)
    assert seen == list(range(50))


def test_null_key_records_stick_to_a_partition_per_batch_and_spread_over_time(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 4)
    with Producer(broker.bootstrap, **broker.producer_settings(batch_size=1024, linger_ms=50)) as producer:
        futures = [producer.send(topic, b"x" * 100) for _ in range(400)]
        producer.flush(30)
    partitions = [f.result().partition for f in futures]
    switches = sum(1 for a, b in zip(partitions, partitions[1:]) if a != b)
    assert set(partitions) == {0, 1, 2, 3}
    assert switches < len(partitions) / 5, "records of one batch share a partition"


def test_explicit_partitions_are_honoured(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 3)
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        metadata = [producer.send(topic, b"v", key=b"same", partition=p).result(timeout=20) for p in (2, 0, 1)]
    assert [m.partition for m in metadata] == [2, 0, 1]


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_each_acks_setting_delivers(broker, topic_name, acks) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Producer(broker.bootstrap, **broker.producer_settings(acks=acks)) as producer:
        futures = [producer.send(topic, str(i).encode()) for i in range(20)]
        producer.flush(30)
    offsets = [f.result().offset for f in futures]
    assert offsets == ([-1] * 20 if acks == 0 else list(range(20)))
    with assigned_consumer(broker.bootstrap, topic, 1) as consumer:
        assert [r.value for r in consume(consumer, 20)] == [str(i).encode() for i in range(20)]


def test_delivery_callbacks_report_each_outcome(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    reports = []
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        for i in range(10):
            producer.send(topic, str(i).encode(), on_delivery=lambda md, err: reports.append((md.offset, err)))
        producer.flush(30)
    assert sorted(reports) == [(i, None) for i in range(10)]


def test_flush_returns_only_after_every_delivery_callback_ran(broker, topic_name) -> None:
    """Batches already sent when flush starts, whose callbacks are still running, are waited for too."""
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    for _ in range(3):
        counted = []

        def slow_count(metadata, error) -> None:
            time.sleep(0.002)  # a busy sender thread: the callbacks of the last batch take a while
            counted.append(error)

        with Producer(broker.bootstrap, **{**broker.producer_settings(), "linger_ms": 0}) as producer:
            for i in range(50):
                producer.send(topic, str(i).encode(), on_delivery=slow_count)
            time.sleep(0.05)  # the batches are sent and their callbacks run when flush starts
            producer.flush(30)
            assert counted == [None] * 50


def test_a_topic_is_created_on_first_send_when_the_broker_allows_it(broker, topic_name) -> None:
    topic = topic_name()
    with Producer(broker.bootstrap, **broker.producer_settings(max_block_ms=20_000)) as producer:
        assert producer.send(topic, b"first").result(timeout=20).offset == 0


def test_read_committed_reads_plain_records_up_to_the_stable_offset(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        for i in range(30):
            producer.send(topic, str(i).encode())
    with assigned_consumer(broker.bootstrap, topic, 1, isolation_level="read_committed") as consumer:
        assert [r.offset for r in consume(consumer, 30)] == list(range(30))
        broker.skip_on_tansu(TANSU_LIST_OFFSETS_LATEST_BUG)
        assert consumer.end_offsets([TopicPartition(topic, 0)])[TopicPartition(topic, 0)] == 30


def test_a_consumer_waits_for_records_that_arrive_during_its_poll(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Consumer(broker.bootstrap, auto_offset_reset="latest") as consumer, \
            Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        assert consumer.position(tp) == 0
        assert consumer.poll(timeout_ms=100) == []
        producer.send(topic, b"late").result(timeout=20)
        assert [r.value for r in consume(consumer, 1)] == [b"late"]


def test_batches_larger_than_max_partition_fetch_bytes_still_arrive_whole(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name(), 2)
    with Producer(broker.bootstrap, **broker.producer_settings(max_request_size=200_000)) as producer:
        for partition in (0, 1):
            for _ in range(3):
                producer.send(topic, b"v" * 50_000, partition=partition)
        producer.flush(30)
    with assigned_consumer(broker.bootstrap, topic, 2, max_partition_fetch_bytes=1000) as consumer:
        got = consume(consumer, 6)
    assert sorted((r.partition, r.offset) for r in got) == [(p, o) for p in (0, 1) for o in range(3)]
    assert all(len(r.value) == 50_000 for r in got)


def test_the_default_producer_is_idempotent_and_delivers(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_IDEMPOTENCE_BUG)
    topic = create_topic(broker.bootstrap, topic_name(), 1)
    with Producer(broker.bootstrap) as producer:
        assert producer.idempotent
        producer.send(topic, b"once").result(timeout=20)
    with assigned_consumer(broker.bootstrap, topic, 1) as consumer:
        assert [r.value for r in consume(consumer, 1)] == [b"once"]


def test_log_append_time_topics_report_the_brokers_timestamp_to_producer_and_consumer(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_TOPIC_CONFIGS_IGNORED)
    topic = create_topic(broker.bootstrap, topic_name(), 1, configs={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        metadata = producer.send(topic, b"v", timestamp=1_000).result(timeout=20)
    after = int(time.time() * 1000)
    with assigned_consumer(broker.bootstrap, topic, 1) as consumer:
        (record,) = consume(consumer, 1)
    assert record.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert before - 1000 <= record.timestamp <= after + 1000
    assert metadata.timestamp == record.timestamp


def test_a_record_over_the_topics_size_limit_fails_alone_and_later_records_still_deliver(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_TOPIC_CONFIGS_IGNORED)
    topic = create_topic(broker.bootstrap, topic_name(), 1, configs={"max.message.bytes": "2000"})
    with Producer(broker.bootstrap, **broker.producer_settings(linger_ms=0)) as producer:
        before = producer.send(topic, b"small").result(timeout=20)
        too_big = producer.send(topic, b"x" * 10_000)
        with pytest.raises(KafkaError) as raised:
            too_big.result(timeout=20)
        after = producer.send(topic, b"small again").result(timeout=20)
    assert raised.value.code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE)
    assert (before.offset, after.offset) == (0, 1)
