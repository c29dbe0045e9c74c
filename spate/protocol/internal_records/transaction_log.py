"""The records of ``__transaction_state``: Kafka's keys and values, declared once.

Every key and value is a data message with its int16 version in front (see
:mod:`spate.protocol.data_schema`)::

    TransactionLogKey    v0      transactional_id
    TransactionLogValue  v0, v1  producer_id, producer_epoch, transaction_timeout_ms,
                                 transaction_status (a TxnState id),
                                 transaction_partitions nullable [topic, partition_ids],
                                 transaction_last_update_timestamp_ms,
                                 transaction_start_timestamp_ms
                                 (v1 is flexible, with tagged fields for newer producers)

A null value is a tombstone: the transactional id expired and was removed.
Anything that does not parse raises :class:`TxnLogRecordError`.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable

from spate.protocol.data_schema import data_message
from spate.protocol.declarations import Array, Field, Struct
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.types import INT8, INT16, INT32, INT64, STRING
from spate.structs import TopicPartition, group_by_topic

TRANSACTION_STATE_TOPIC = "__transaction_state"


class TxnState(enum.IntEnum):
    """The states of a transactional id (Kafka's TransactionState), with the ids stored as its status."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def display_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def is_complete(self) -> bool:
        return self in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

    @property
    def is_prepare(self) -> bool:
        return self in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)

    @property
    def is_idle(self) -> bool:
        """No transaction in progress: a new one may start, the id may expire."""
        return self is TxnState.EMPTY or self.is_complete


class TxnLogRecordError(Exception):
    """A ``__transaction_state`` key or value that cannot be read."""


TransactionLogKey = data_message(
    "TransactionLogKey",
    versions=(0, 0),
    flexible_from=None,
    fields=[Field("transactional_id", STRING)],
)

TransactionLogValue = data_message(
    "TransactionLogValue",
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field("producer_id", INT64),
        Field("previous_producer_id", INT64, versions=(1, None), tag=0, default=-1),
        Field("next_producer_id", INT64, versions=(1, None), tag=1, default=-1),
        Field("producer_epoch", INT16),
        Field("transaction_timeout_ms", INT32),
        Field("transaction_status", INT8),
        Field(
            "transaction_partitions",
            Array(Struct("PartitionsSchema", Field("topic", STRING), Field("partition_ids", Array(INT32)))),
            nullable=True,
        ),
        Field("transaction_last_update_timestamp_ms", INT64),
        Field("transaction_start_timestamp_ms", INT64),
        Field("client_transaction_version", INT16, versions=(1, None), tag=2, default=0),
    ],
)


def decode_key(data: bytes | memoryview | None) -> str:
    """The transactional id a record is about."""
    if data is None:
        raise TxnLogRecordError("__transaction_state record without a key")
    try:
        return TransactionLogKey.from_version_prefixed_bytes(data).transactional_id
    except ProtocolDecodeError as exc:
        raise TxnLogRecordError(f"__transaction_state key: {exc}") from None


def decode_value(transactional_id: str, data: bytes | memoryview) -> Any:
    """A :data:`TransactionLogValue` whose status is a known :class:`TxnState`."""
    what = f"__transaction_state value of {transactional_id!r}"
    try:
        value = TransactionLogValue.from_version_prefixed_bytes(data)
    except ProtocolDecodeError as exc:
        raise TxnLogRecordError(f"{what}: {exc}") from None
    try:
        TxnState(value.transaction_status)
    except ValueError:
        raise TxnLogRecordError(f"{what}: transaction status {value.transaction_status} is unknown") from None
    return value


def partitions_schema(partitions: Iterable[TopicPartition]) -> list[Any]:
    """``transaction_partitions`` for ``partitions``: topics and their partitions in order."""
    by_topic = group_by_topic(sorted(partitions), value=lambda tp: tp.partition)
    return [TransactionLogValue.PartitionsSchema(topic, ids) for topic, ids in by_topic.items()]


def topic_partitions(value: Any) -> frozenset[TopicPartition]:
    """The partitions a value's transaction holds (a null list holds none)."""
    return frozenset(
        TopicPartition(entry.topic, partition)
        for entry in value.transaction_partitions or ()
        for partition in entry.partition_ids
    )
