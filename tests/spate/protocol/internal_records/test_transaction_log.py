"""``__transaction_state`` as the ``spate transactions`` command reads it: ids, states and partitions."""

from __future__ import annotations

import pytest

from spate.protocol.internal_records.transaction_log import (
    TransactionLogKey,
    TransactionLogValue,
    TxnLogRecordError,
    TxnState,
    decode_key,
    decode_value,
    partitions_schema,
    topic_partitions,
)
from spate.structs import TopicPartition

PARTITIONS = frozenset({TopicPartition("out", 2), TopicPartition("out", 0), TopicPartition("audit", 1)})


def value(status: int = TxnState.ONGOING) -> TransactionLogValue:
    return TransactionLogValue(
        producer_id=7, producer_epoch=1, transaction_timeout_ms=60_000, transaction_status=status,
        transaction_partitions=partitions_schema(PARTITIONS), transaction_last_update_timestamp_ms=20,
        transaction_start_timestamp_ms=10,
    )


def test_partitions_are_stored_by_topic_in_order_and_read_back_as_a_set() -> None:
    assert [(p.topic, p.partition_ids) for p in partitions_schema(PARTITIONS)] == [("audit", [1]), ("out", [0, 2])]
    assert topic_partitions(value()) == PARTITIONS


def test_a_null_partition_list_holds_no_partitions() -> None:
    stored = value()
    stored.transaction_partitions = None
    assert topic_partitions(stored) == frozenset()


def test_key_and_value_read_back() -> None:
    assert decode_key(TransactionLogKey("copier").to_version_prefixed_bytes(0)) == "copier"
    decoded = decode_value("copier", value().to_version_prefixed_bytes(0))
    assert decoded == value()
    assert TxnState(decoded.transaction_status).display_name == "Ongoing"


def test_an_unknown_status_or_a_missing_key_is_the_typed_error() -> None:
    with pytest.raises(TxnLogRecordError, match="status 9"):
        decode_value("copier", value(status=9).to_version_prefixed_bytes(0))
    with pytest.raises(TxnLogRecordError):
        decode_key(None)
    with pytest.raises(TxnLogRecordError):
        decode_key(b"\x00\x01\x00\x01x")


def test_state_names_are_kafkas() -> None:
    assert [s.display_name for s in TxnState] == [
        "Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
        "PrepareEpochFence",
    ]
