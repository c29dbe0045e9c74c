"""A producer batch encodes records as they come and becomes exactly the RecordBatch the builder makes."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.client.producer.batch import ProducerBatch
from spate.client.producer.record_metadata import RecordMetadata
from spate.records import Compression, Record, build_batch, decode_batch, validate_batch
from spate.structs import TopicPartition

TP = TopicPartition("orders", 3)


def fill(batch: ProducerBatch, records: list[tuple[int, bytes | None, bytes | None, tuple]]) -> list[Future]:
    futures = []
    for timestamp, key, value, headers in records:
        future: Future = Future()
        assert batch.try_append(timestamp, key, value, headers, future)
        futures.append(future)
    return futures


record_strategy = st.tuples(
    st.integers(min_value=0, max_value=2**41),
    st.none() | st.binary(max_size=20),
    st.none() | st.binary(max_size=200),
    st.lists(st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=5)), max_size=3).map(tuple),
)


@settings(max_examples=100, deadline=None)
@given(st.lists(record_strategy, min_size=1, max_size=30))
def test_sealed_batch_is_byte_identical_to_the_record_builder(records) -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    fill(batch, records)
    batch.set_producer_state(42, 3, 17, False)
    expected = build_batch(
        [Record(i, ts, k, v, h) for i, (ts, k, v, h) in enumerate(records)],
        producer_id=42,
        producer_epoch=3,
        base_sequence=17,
    )
    assert bytes(batch.encode()) == expected


@pytest.mark.parametrize("codec", list(Compression))
def test_every_codec_round_trips_through_the_record_reader(codec: Compression) -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20, compression=codec)
    records = [(1000 + i, f"k{i}".encode(), f"value {i}".encode() * 20, (("h", b"v"),)) for i in range(50)]
    fill(batch, records)
    decoded = decode_batch(bytes(batch.encode()))
    assert decoded.header.compression == codec
    assert [(r.timestamp, r.key, r.value, r.headers) for r in decoded.records] == list(records)


def test_timestamps_may_go_backwards_within_a_batch() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    fill(batch, [(5000, None, b"a", ()), (4000, None, b"b", ()), (6000, None, b"c", ())])
    header = validate_batch(bytes(batch.encode()))
    assert (header.base_timestamp, header.max_timestamp) == (5000, 6000)
    assert [r.timestamp for r in decode_batch(bytes(batch.encode())).records] == [5000, 4000, 6000]


def test_a_record_that_would_overflow_the_capacity_is_refused_and_leaves_the_batch_unchanged() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=200)
    fill(batch, [(1, None, b"x" * 100, ())])
    size = batch.size_in_bytes
    assert not batch.try_append(2, None, b"y" * 100, (), Future())
    assert (batch.size_in_bytes, batch.record_count) == (size, 1)
    assert [r.value for r in decode_batch(bytes(batch.encode())).records] == [b"x" * 100]


def test_the_first_record_is_taken_even_when_larger_than_the_capacity() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=10)
    fill(batch, [(1, None, b"z" * 1000, ())])
    assert batch.record_count == 1 and batch.is_full


def test_a_sealed_batch_takes_no_more_records() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    fill(batch, [(1, None, b"a", ())])
    batch.seal()
    assert not batch.try_append(2, None, b"b", (), Future())
    assert batch.is_full


def test_re_encoding_under_a_new_identity_changes_header_and_crc_but_not_records() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20, compression=Compression.GZIP)
    fill(batch, [(1, b"k", b"v", ())])
    batch.set_producer_state(1, 0, 0, False)
    first = bytes(batch.encode())
    batch.set_producer_state(9, 2, 5, False)
    second = validate_batch(bytes(batch.encode()))
    assert (second.producer_id, second.producer_epoch, second.base_sequence) == (9, 2, 5)
    assert bytes(batch.encode())[61:] == first[61:]


def test_clear_sequence_drops_the_producer_identity() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    fill(batch, [(1, None, b"v", ())])
    batch.set_producer_state(7, 1, 10, False)
    batch.clear_sequence()
    header = validate_batch(bytes(batch.encode()))
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert not batch.has_sequence


def test_complete_resolves_each_future_with_consecutive_offsets_and_record_timestamps() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = fill(batch, [(10, None, b"a", ()), (20, None, b"b", ())])
    batch.complete(100)
    assert [f.result() for f in futures] == [
        RecordMetadata("orders", 3, 100, 10),
        RecordMetadata("orders", 3, 101, 20),
    ]


def test_complete_with_log_append_time_reports_the_broker_timestamp() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = fill(batch, [(10, None, b"a", ())])
    batch.complete(5, log_append_time=999)
    assert futures[0].result().timestamp == 999


def test_complete_without_an_offset_reports_minus_one() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = fill(batch, [(10, None, b"a", ()), (11, None, b"b", ())])
    batch.complete(-1)
    assert [f.result().offset for f in futures] == [-1, -1]


def test_fail_fails_every_future_once_and_ignores_a_later_outcome() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = fill(batch, [(10, None, b"a", ()), (11, None, b"b", ())])
    error = RuntimeError("boom")
    batch.fail(error)
    batch.complete(7)
    assert all(f.exception() is error for f in futures)


def test_a_cancelled_future_does_not_stop_the_others_from_resolving() -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = fill(batch, [(10, None, b"a", ()), (11, None, b"b", ())])
    assert futures[0].cancel()
    batch.complete(0)
    assert futures[1].result().offset == 1


@pytest.mark.parametrize("outcome", ["complete", "fail"])
def test_a_batch_is_done_only_once_its_delivery_callbacks_ran(outcome: str) -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    done_seen_by_callbacks = []
    for i, future in enumerate(fill(batch, [(1, None, b"a", ()), (2, None, b"b", ())])):
        batch.result.add_callback_unlocked(i, lambda metadata, error: done_seen_by_callbacks.append(batch.done))
    if outcome == "complete":
        batch.complete(7)
    else:
        batch.fail(RuntimeError("broker said no"))
    assert done_seen_by_callbacks == [False, False]
    assert batch.done
