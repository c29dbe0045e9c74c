"""What the transaction coordinator writes to ``__transaction_state``, and how it reads it back.

The record formats are declared in
:mod:`spate.protocol.internal_records.transaction_log`; this broker writes
keys and values as version 0 and reads every version Kafka has written,
turning values into :class:`TxnMetadata`.
"""

from __future__ import annotations

from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from spate.protocol.internal_records.transaction_log import (
    TransactionLogKey,
    TransactionLogValue,
    TxnLogRecordError,
    TxnState,
    decode_key,
    partitions_schema,
    topic_partitions,
)
from spate.protocol.internal_records.transaction_log import decode_value as decode_value_record

__all__ = ["TxnLogRecordError", "decode_key", "decode_value", "encode_key", "encode_value"]

KEY_VERSION = 0
VALUE_VERSION = 0


def encode_key(transactional_id: str) -> bytes:
    return TransactionLogKey(transactional_id).to_version_prefixed_bytes(KEY_VERSION)


def encode_value(metadata: TxnMetadata) -> bytes:
    value = TransactionLogValue(
        producer_id=metadata.producer_id,
        producer_epoch=metadata.producer_epoch,
        transaction_timeout_ms=metadata.timeout_ms,
        transaction_status=int(metadata.state),
        transaction_partitions=partitions_schema(metadata.partitions),
        transaction_last_update_timestamp_ms=metadata.last_update_ms,
        transaction_start_timestamp_ms=metadata.start_ms,
    )
    return value.to_version_prefixed_bytes(VALUE_VERSION)


def decode_value(transactional_id: str, data: bytes | memoryview) -> TxnMetadata:
    """The id's stored state, of any value version; TxnLogRecordError if it does not parse."""
    value = decode_value_record(transactional_id, data)
    return TxnMetadata(
        transactional_id=transactional_id,
        producer_id=value.producer_id,
        producer_epoch=value.producer_epoch,
        timeout_ms=value.transaction_timeout_ms,
        state=TxnState(value.transaction_status),
        partitions=topic_partitions(value),
        last_update_ms=value.transaction_last_update_timestamp_ms,
        start_ms=value.transaction_start_timestamp_ms,
    )
