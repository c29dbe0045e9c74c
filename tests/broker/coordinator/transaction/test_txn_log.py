"""``__transaction_state`` records: Kafka's byte format, and a log that only ever holds legal transitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.coordinator.transaction import TxnMetadata, TxnState
from broker_core.coordinator.transaction.txn_log import (
    TxnLogRecordError,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from broker_core.coordinator.transaction.txn_state import check_transition
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.transaction.txn_harness import TIMEOUT_MS, TOPICS, TxnHarness, tp

ONGOING = TxnMetadata(
    transactional_id="copier-0",
    producer_id=4001,
    producer_epoch=7,
    timeout_ms=60_000,
    state=TxnState.ONGOING,
    partitions=frozenset({TopicPartition("out", 2), TopicPartition("out", 0), TopicPartition("__consumer_offsets", 9)}),
    last_update_ms=1_700_000_000_500,
    start_ms=1_700_000_000_000,
)


def test_key_is_version_zero_and_the_id():
    assert encode_key("ab") == b"\x00\x00" + b"\x00\x02ab"
    assert decode_key(encode_key("copier-0")) == "copier-0"


def test_value_layout_matches_kafkas_version_zero():
    value = encode_value(ONGOING)
    expected = (
        b"\x00\x00"  # version
        + (4001).to_bytes(8, "big") + (7).to_bytes(2, "big") + (60_000).to_bytes(4, "big") + b"\x01"
        + (2).to_bytes(4, "big")  # two topics, sorted
        + b"\x00\x12__consumer_offsets" + (1).to_bytes(4, "big") + (9).to_bytes(4, "big")
        + b"\x00\x03out" + (2).to_bytes(4, "big") + (0).to_bytes(4, "big") + (2).to_bytes(4, "big")
        + (1_700_000_000_500).to_bytes(8, "big") + (1_700_000_000_000).to_bytes(8, "big")
    )
    assert value == expected
    assert decode_value("copier-0", value) == ONGOING


def test_flexible_version_one_value_is_read_with_its_tagged_fields():
    value = (
        b"\x00\x01" + (5).to_bytes(8, "big") + (0).to_bytes(2, "big") + (1000).to_bytes(4, "big") + b"\x04"
        + b"\x02" + b"\x02t" + b"\x02" + (3).to_bytes(4, "big") + b"\x00"  # one topic, one partition, no tags
        + (20).to_bytes(8, "big") + (10).to_bytes(8, "big")
        + b"\x01" + b"\x02\x02\x00\x01"  # one tagged field: ClientTransactionVersion = 1
    )
    decoded = decode_value("x", value)
    assert decoded.state is TxnState.COMPLETE_COMMIT
    assert decoded.partitions == {TopicPartition("t", 3)}
    assert (decoded.last_update_ms, decoded.start_ms) == (20, 10)


@pytest.mark.parametrize(
    "value, reason",
    [
        (b"\x00\x09" + bytes(40), "version 9"),
        (encode_value(ONGOING)[:20], "copier-0"),
        (encode_value(ONGOING) + b"\x00", "trailing"),
        (encode_value(ONGOING)[:16] + b"\x0b" + encode_value(ONGOING)[17:], "status 11"),
    ],
)
def test_unreadable_values_raise_an_error_naming_the_problem(value, reason):
    with pytest.raises(TxnLogRecordError, match=reason):
        decode_value("copier-0", value)


PARTITIONS = [tp(topic, p) for topic, count in TOPICS.items() for p in range(count)] + [tp("ghost", 0)]
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["init", "add", "offsets", "commit", "abort", "tick", "restart", "stale"]),
        st.sampled_from(["a", "b"]),
        st.lists(st.sampled_from(PARTITIONS), min_size=1, max_size=3),
    ),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(OPERATIONS)
def test_any_sequence_of_requests_leaves_only_legal_transitions_in_the_log(operations):
    h = TxnHarness()
    producers: dict[str, tuple[int, int]] = {}
    for op, txn_id, partitions in operations:
        producer = producers.get(txn_id, (-1, -1))
        if op == "init":
            result = h.coordinator.init_producer_id(txn_id, TIMEOUT_MS)
            if result.error is ErrorCode.NONE:
                producers[txn_id] = (result.producer_id, result.producer_epoch)
        elif op == "add":
            h.coordinator.add_partitions(txn_id, *producer, partitions)
        elif op == "offsets":
            h.coordinator.add_offsets(txn_id, *producer, "group-" + txn_id)
        elif op in ("commit", "abort"):
            h.coordinator.end_transaction(txn_id, *producer, op == "commit")
        elif op == "stale":
            h.coordinator.end_transaction(txn_id, producer[0], producer[1] - 1, True)
        elif op == "tick":
            h.scheduler.advance(TIMEOUT_MS)
        else:
            h = h.restarted()
    h.scheduler.advance(0)

    last: dict[str, TxnState | None] = {}
    for record in h.topic.records():
        txn_id = decode_key(record.key)
        if record.value is None:
            last[txn_id] = None
            continue
        state = decode_value(txn_id, record.value).state
        check_transition(txn_id, last.get(txn_id), state)
        last[txn_id] = state
