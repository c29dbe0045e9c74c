"""The record format of ``__transaction_state``: Kafka's keys and values, byte for byte.

Key (version 0)::

    version int16 = 0, transactional_id string

Value (this broker writes version 0; version 1 is the same in flexible
encoding, with tagged fields this broker skips)::

    version int16, producer_id int64, producer_epoch int16,
    transaction_timeout_ms int32, transaction_status int8 (TxnState),
    transaction_partitions nullable [topic string, partition_ids [int32]],
    last_update_timestamp_ms int64, start_timestamp_ms int64

A null value is a tombstone: the transactional id expired and was removed.
"""

from __future__ import annotations

from collections import defaultdict

from broker_core.coordinator.record_fields import RecordFieldReader
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import TxnState
from broker_core.storage.files import TopicPartition
from spate.protocol import types as t

KEY_VERSION = 0
VALUE_VERSION = 0
_FLEXIBLE_VALUE_VERSION = 1


class TxnLogRecordError(Exception):
    """A ``__transaction_state`` key or value this broker cannot read."""


def encode_key(transactional_id: str) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, KEY_VERSION)
    t.STRING.encode(buf, transactional_id)
    return bytes(buf)


def encode_value(metadata: TxnMetadata) -> bytes:
    buf = bytearray()
    t.INT16.encode(buf, VALUE_VERSION)
    t.INT64.encode(buf, metadata.producer_id)
    t.INT16.encode(buf, metadata.producer_epoch)
    t.INT32.encode(buf, metadata.timeout_ms)
    t.INT8.encode(buf, int(metadata.state))
    by_topic: dict[str, list[int]] = defaultdict(list)
    for tp in metadata.partitions:
        by_topic[tp.topic].append(tp.partition)
    t.INT32.encode(buf, len(by_topic))
    for topic in sorted(by_topic):
        t.STRING.encode(buf, topic)
        partitions = sorted(by_topic[topic])
        t.INT32.encode(buf, len(partitions))
        for partition in partitions:
            t.INT32.encode(buf, partition)
    t.INT64.encode(buf, metadata.last_update_ms)
    t.INT64.encode(buf, metadata.start_ms)
    return bytes(buf)


def decode_key(data: bytes | memoryview | None) -> str:
    if data is None:
        raise TxnLogRecordError("__transaction_state record without a key")
    reader = RecordFieldReader(data, "__transaction_state key", TxnLogRecordError)
    version = reader.read(t.INT16)
    if version != KEY_VERSION:
        raise reader.fail(f"key version {version} is unknown")
    transactional_id = reader.read(t.STRING)
    reader.finish()
    return transactional_id


def decode_value(transactional_id: str, data: bytes | memoryview) -> TxnMetadata:
    reader = RecordFieldReader(data, f"__transaction_state value of {transactional_id!r}", TxnLogRecordError)
    version = reader.read(t.INT16)
    if not 0 <= version <= _FLEXIBLE_VALUE_VERSION:
        raise reader.fail(f"value version {version} is unknown")
    reader.flexible = version >= _FLEXIBLE_VALUE_VERSION
    producer_id = reader.read(t.INT64)
    producer_epoch = reader.read(t.INT16)
    timeout_ms = reader.read(t.INT32)
    status = reader.read(t.INT8)
    try:
        state = TxnState(status)
    except ValueError:
        raise reader.fail(f"transaction status {status} is unknown") from None
    partitions: set[TopicPartition] = set()
    for _ in range(max(reader.count(nullable=True), 0)):
        topic = reader.string()
        for _ in range(reader.count()):
            partitions.add(TopicPartition(topic, reader.read(t.INT32)))
        reader.end_struct()
    last_update_ms = reader.read(t.INT64)
    start_ms = reader.read(t.INT64)
    reader.end_struct()
    reader.finish()
    return TxnMetadata(
        transactional_id=transactional_id,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        timeout_ms=timeout_ms,
        state=state,
        partitions=frozenset(partitions),
        last_update_ms=last_update_ms,
        start_ms=start_ms,
    )
