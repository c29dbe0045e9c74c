"""Clients of the legacy message formats (magic 0 and 1), against a real broker process.

Produce v0-2 carry message sets, which the broker stores as RecordBatch v2;
Fetch v0-3 read message sets, which the broker converts from what it stores.
kafka-python speaks the old versions when told the broker's age
(``api_version=(0, 9)``: Produce and Fetch v1 with magic 0; ``(0, 10, 0)``:
v2 with magic 1), and librdkafka when told not to ask
(``api.version.request=false``, ``broker.version.fallback=0.9.0.0``).
Records cross between those clients and current ones both ways.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import MAGIC_V0
from tests.spate.records.legacy_messages import message
from tests.support.admin_requests import create_topic, incremental_alter_configs
from tests.support.broker_under_test import require_spate
from tests.support.controller_requests import call

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

OLD_CLIENTS = {"magic 0": (0, 9), "magic 1": (0, 10, 0)}
CREATE_TIME = 1_700_000_000_000


@pytest.fixture(autouse=True)
def _spate_only(broker_kind: str) -> None:
    require_spate(broker_kind, "the conversions are the broker's own")


def _topic(broker, name: str, **configs: str) -> str:
    result = create_topic(broker.bootstrap, name, partitions=1, replication_factor=1, configs=configs)
    assert result.error_code == ErrorCode.NONE, result
    return name


def _old_producer(broker, api_version: tuple[int, ...], codec: str | None = None) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=api_version, compression_type=codec,
                         linger_ms=50, max_block_ms=20000)


def _old_consumer(broker, topic: str, api_version: tuple[int, ...], reset: str = "earliest") -> KafkaConsumer:
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, api_version=api_version, group_id=None,
                             auto_offset_reset=reset, enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, 0)])
    return consumer


def _poll_old(consumer: KafkaConsumer, count: int, timeout_s: float = 20.0) -> list:
    records: list = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    return records


def _current_consumer(broker, topic: str, count: int, timeout_s: float = 20.0, **extra: str) -> list:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-reader",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False, **extra})
    consumer.subscribe([topic])
    messages = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                messages.append(message)
    finally:
        consumer.close()
    return messages


def _produce_current(broker, topic: str, count: int, **extra: object) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20, **extra})
    for i in range(count):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), timestamp=CREATE_TIME + i)
    assert producer.flush(20) == 0


# -- Produce v0-2: message sets in, RecordBatch v2 stored ------------------------------------------------------


def _produce_old_kafka_python(broker, topic: str, api_version: tuple[int, ...], codec: str) -> list[int]:
    producer = _old_producer(broker, api_version, None if codec == "none" else codec)
    futures = [producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=0,
                             timestamp_ms=CREATE_TIME + i) for i in range(30)]
    offsets = [future.get(timeout=20).offset for future in futures]
    producer.close()
    return offsets


def _produce_old_librdkafka(broker, topic: str, fallback: str, codec: str) -> list[int]:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "api.version.request": False,
                         "broker.version.fallback": fallback, "enable.idempotence": False,
                         "compression.codec": codec, "linger.ms": 50})
    offsets: list[int] = []
    for i in range(30):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=0, timestamp=CREATE_TIME + i,
                         on_delivery=lambda err, msg: offsets.append(-1 if err else msg.offset()))
    assert producer.flush(20) == 0
    return offsets


# kafka-python writes magic 0 LZ4 only with the xxhash module, which librdkafka's cases cover instead.
OLD_PRODUCERS = [
    *[pytest.param("kafka-python", "magic 0", codec, id=f"kafka-python-magic0-{codec}") for codec in ("none", "gzip")],
    *[pytest.param("kafka-python", "magic 1", codec, id=f"kafka-python-magic1-{codec}")
      for codec in ("none", "gzip", "lz4")],
    *[pytest.param("librdkafka", "magic 0", codec, id=f"librdkafka-magic0-{codec}")
      for codec in ("none", "gzip", "snappy", "lz4")],
    *[pytest.param("librdkafka", "magic 1", codec, id=f"librdkafka-magic1-{codec}") for codec in ("snappy", "lz4")],
]
LIBRDKAFKA_FALLBACK = {"magic 0": "0.9.0.0", "magic 1": "0.10.0.0"}


@pytest.mark.parametrize(("client", "magic", "codec"), OLD_PRODUCERS)
def test_an_old_producers_messages_are_read_by_a_current_consumer(broker, topic_name, client: str, magic: str,
                                                                   codec: str) -> None:
    topic = _topic(broker, topic_name())
    if client == "kafka-python":
        offsets = _produce_old_kafka_python(broker, topic, OLD_CLIENTS[magic], codec)
    else:
        offsets = _produce_old_librdkafka(broker, topic, LIBRDKAFKA_FALLBACK[magic], codec)
    assert offsets == list(range(30))

    messages = _current_consumer(broker, topic, 30)
    assert [(m.offset(), m.key(), m.value()) for m in messages] == [
        (i, f"k{i}".encode(), f"v{i}".encode()) for i in range(30)
    ]
    # Magic 0 has no timestamps: the records carry none (-1); magic 1 keeps the producer's.
    expected = [-1] * 30 if magic == "magic 0" else [CREATE_TIME + i for i in range(30)]
    assert [m.timestamp()[1] for m in messages] == expected


def test_a_log_append_time_topic_stamps_an_old_producers_messages(broker, topic_name) -> None:
    topic = _topic(broker, topic_name(), **{"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    producer = _old_producer(broker, OLD_CLIENTS["magic 0"], "gzip")
    for i in range(5):
        producer.send(topic, value=f"v{i}".encode(), partition=0)
    producer.flush(20)
    producer.close()
    messages = _current_consumer(broker, topic, 5)
    assert len(messages) == 5
    assert all(before <= m.timestamp()[1] <= before + 60_000 for m in messages)


def test_librdkafka_without_api_versions_produces_and_consumes_magic_0(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    old = {"api.version.request": False, "broker.version.fallback": "0.9.0.0"}
    _produce_current(broker, topic, 20, **old, **{"enable.idempotence": False, "compression.codec": "gzip"})
    messages = _current_consumer(broker, topic, 20, **{k: str(v).lower() for k, v in old.items()})
    assert [(m.key(), m.value()) for m in messages] == [(f"k{i}".encode(), f"v{i}".encode()) for i in range(20)]


# -- Fetch v0-3: RecordBatch v2 stored, message sets out -------------------------------------------------------


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "snappy"])
@pytest.mark.parametrize("magic", list(OLD_CLIENTS))
def test_an_old_consumer_reads_what_a_current_producer_wrote(broker, topic_name, magic: str, codec: str) -> None:
    topic = _topic(broker, topic_name())
    _produce_current(broker, topic, 40, **{"compression.codec": codec})
    consumer = _old_consumer(broker, topic, OLD_CLIENTS[magic])
    records = _poll_old(consumer, 40)
    consumer.close()
    assert [(r.offset, r.key, r.value) for r in records] == [
        (i, f"k{i}".encode(), f"v{i}".encode()) for i in range(40)
    ]
    # Magic 0 carries no timestamps, which kafka-python shows as None.
    expected = [None] * 40 if magic == "magic 0" else [CREATE_TIME + i for i in range(40)]
    assert [r.timestamp for r in records] == expected


def test_an_old_consumer_reads_past_transaction_markers(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"{topic}-txn"})
    producer.init_transactions(20)
    for round_ in range(3):
        producer.begin_transaction()
        producer.produce(topic, value=f"t{round_}".encode(), partition=0)
        producer.commit_transaction(20)
    _produce_current(broker, topic, 1)
    consumer = _old_consumer(broker, topic, OLD_CLIENTS["magic 1"])
    records = _poll_old(consumer, 4)
    consumer.close()
    # Data at 0, 2, 4 and 6; the markers between them stay behind.
    assert [(r.offset, r.value) for r in records] == [(0, b"t0"), (2, b"t1"), (4, b"t2"), (6, b"v0")]


def _fetch(broker, topic: str, version: int, offset: int = 0):
    Q = FetchRequest
    partition = Q.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
    body = Q(max_wait_ms=0, min_bytes=1, topics=[Q.FetchTopic(topic=topic, partitions=[partition])])
    return call(broker.bootstrap, ApiKey.FETCH, version, body).responses[0].partitions[0]


def test_zstd_records_cannot_be_down_converted(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    # Compressible values: librdkafka sends a batch uncompressed when compression would not shrink it.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "compression.codec": "zstd", "linger.ms": 20})
    for _ in range(3):
        producer.produce(topic, value=b"z" * 1000, partition=0)
    assert producer.flush(20) == 0
    assert _fetch(broker, topic, 3).error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert _fetch(broker, topic, 4).error_code == ErrorCode.NONE


def test_a_topic_without_down_conversion_refuses_legacy_fetches(broker, topic_name) -> None:
    topic = _topic(broker, topic_name(), **{"message.downconversion.enable": "false"})
    _produce_current(broker, topic, 3)
    assert _fetch(broker, topic, 2).error_code == ErrorCode.UNSUPPORTED_VERSION
    current = _fetch(broker, topic, 4)
    assert current.error_code == ErrorCode.NONE and len(current.records) > 0
    set_op = 0
    result = incremental_alter_configs(broker.bootstrap, topic, [("message.downconversion.enable", set_op, "true")])
    assert result.error_code == ErrorCode.NONE
    deadline = time.monotonic() + 10
    while _fetch(broker, topic, 2).error_code != ErrorCode.NONE and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _fetch(broker, topic, 2).error_code == ErrorCode.NONE


def test_a_legacy_fetch_answers_magic_0_below_v2_and_magic_1_from_v2(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    _produce_current(broker, topic, 2)
    for version, magic in [(0, 0), (1, 0), (2, 1), (3, 1)]:
        records = bytes(_fetch(broker, topic, version).records)
        assert records[16] == magic, f"Fetch v{version}"


# -- bad input -------------------------------------------------------------------------------------------------


def _message_v0(offset: int, value: bytes, *, crc: int | None = None) -> bytes:
    return message(offset, value, magic=MAGIC_V0, crc=crc)


def _produce_v1(broker, topic: str, records: bytes, version: int = 1):
    Q = ProduceRequest
    body = Q(acks=1, timeout_ms=5000, topic_data=[
        Q.TopicProduceData(name=topic, partition_data=[Q.PartitionProduceData(index=0, records=records)])])
    return call(broker.bootstrap, ApiKey.PRODUCE, version, body).responses[0].partition_responses[0]


def test_a_bad_message_set_is_refused_and_nothing_is_appended(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    assert _produce_v1(broker, topic, _message_v0(0, b"good")).error_code == ErrorCode.NONE
    bad = _message_v0(0, b"one") + _message_v0(1, b"two", crc=0)  # not the CRC of that message
    assert _produce_v1(broker, topic, bad).error_code == ErrorCode.CORRUPT_MESSAGE
    assert _produce_v1(broker, topic, _message_v0(0, b"cut")[:-2]).error_code == ErrorCode.CORRUPT_MESSAGE
    log_append_time = 0x08  # only the broker may choose it
    assert _produce_v1(broker, topic, message(0, b"claim", attributes=log_append_time, timestamp=CREATE_TIME), version=2).error_code \
        == ErrorCode.INVALID_TIMESTAMP
    messages = _current_consumer(broker, topic, 1, timeout_s=5)
    assert [m.value() for m in messages] == [b"good"]
    assert _fetch(broker, topic, 4).high_watermark == 1


# -- ListOffsets v0 --------------------------------------------------------------------------------------------


def _list_offsets_v0(broker, topic: str, timestamp: int, max_num_offsets: int) -> tuple[int, list[int]]:
    Q = ListOffsetsRequest
    body = Q(replica_id=-1, topics=[Q.ListOffsetsTopic(name=topic, partitions=[
        Q.ListOffsetsPartition(partition_index=0, timestamp=timestamp, max_num_offsets=max_num_offsets)])])
    partition = call(broker.bootstrap, ApiKey.LIST_OFFSETS, 0, body).topics[0].partitions[0]
    return partition.error_code, list(partition.old_style_offsets)


def test_list_offsets_v0_lists_segment_base_offsets_newest_first(broker, topic_name) -> None:
    # Each batch of 1 KB rolls a new segment of at most 1,100 bytes.
    topic = _topic(broker, topic_name(), **{"segment.bytes": "1100"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    for i in range(3):
        producer.produce(topic, value=b"x" * 1000, partition=0)
        assert producer.flush(20) == 0
    assert _list_offsets_v0(broker, topic, -1, 1) == (ErrorCode.NONE, [3])
    assert _list_offsets_v0(broker, topic, -1, 10) == (ErrorCode.NONE, [3, 2, 1, 0])
    assert _list_offsets_v0(broker, topic, -2, 10) == (ErrorCode.NONE, [0])
    # Before any segment was written: nothing; after all of them: the same as latest.
    assert _list_offsets_v0(broker, topic, 1000, 10) == (ErrorCode.NONE, [])
    future = int(time.time() * 1000) + 3_600_000
    assert _list_offsets_v0(broker, topic, future, 2) == (ErrorCode.NONE, [3, 2])


def test_an_old_consumer_without_a_position_starts_from_list_offsets_v0(broker, topic_name) -> None:
    topic = _topic(broker, topic_name())
    _produce_current(broker, topic, 5)
    consumer = _old_consumer(broker, topic, OLD_CLIENTS["magic 0"], reset="latest")
    consumer.poll(timeout_ms=500)
    assert consumer.position(TopicPartition(topic, 0)) == 5
    consumer.close()


# -- OffsetCommit v0-1 and OffsetFetch v0 ------------------------------------------------------------------------


def _commit(broker, version: int, group: str, topic: str, offset: int) -> int:
    Q = OffsetCommitRequest
    partition = Q.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                               committed_metadata=f"v{version}", commit_timestamp=CREATE_TIME)
    body = Q(group_id=group, topics=[Q.OffsetCommitRequestTopic(name=topic, partitions=[partition])])
    return call(broker.bootstrap, ApiKey.OFFSET_COMMIT, version, body).topics[0].partitions[0].error_code


def _committed(broker, version: int, group: str, topic: str) -> tuple[int, int, str | None]:
    Q = OffsetFetchRequest
    body = Q(group_id=group, topics=[Q.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    partition = call(broker.bootstrap, ApiKey.OFFSET_FETCH, version, body).topics[0].partitions[0]
    return partition.error_code, partition.committed_offset, partition.metadata


@pytest.mark.parametrize("version", [0, 1])
def test_a_groupless_commit_of_an_old_client_is_read_back_by_every_offset_fetch(broker, topic_name,
                                                                             version: int) -> None:
    topic = _topic(broker, topic_name())
    group = f"{topic}-old-group"
    assert _commit(broker, version, group, topic, 42) == ErrorCode.NONE
    for fetch_version in (0, 1, 5):
        assert _committed(broker, fetch_version, group, topic) == (ErrorCode.NONE, 42, f"v{version}")
