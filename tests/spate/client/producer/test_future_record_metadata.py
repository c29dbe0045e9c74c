"""A batch's records share one outcome; each record's future and callback read it at its own index.

No broker: batches are filled and settled by hand, as the sender would.
"""

from __future__ import annotations

import logging
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.client.producer.batch import ProducerBatch
from spate.client.producer.future_record_metadata import (
    FutureRecordMetadata,
    ProduceResult,
)
from spate.client.producer.record_metadata import RecordMetadata
from spate.records import Record, build_batch
from spate.records.batch import HEADER_SIZE
from spate.records.record import encode_record_into
from spate.structs import TopicPartition

TP = TopicPartition("orders", 2)


def filled(timestamps: list[int]) -> tuple[ProducerBatch, list[FutureRecordMetadata]]:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 20)
    futures = []
    for stamp in timestamps:
        assert batch.try_append(stamp, None, b"v", ())
        futures.append(FutureRecordMetadata(batch.result, batch.record_count - 1))
    return batch, futures


def test_each_future_resolves_to_its_own_offset_and_timestamp() -> None:
    batch, futures = filled([10, 20, 30])
    batch.complete(500)
    assert [f.result(0) for f in futures] == [
        RecordMetadata("orders", 2, 500, 10),
        RecordMetadata("orders", 2, 501, 20),
        RecordMetadata("orders", 2, 502, 30),
    ]


def test_log_append_time_replaces_every_create_time() -> None:
    batch, futures = filled([10, 20])
    batch.complete(7, log_append_time=99)
    assert [f.result(0).timestamp for f in futures] == [99, 99]


def test_a_failed_batch_fails_every_future_with_the_same_error() -> None:
    batch, futures = filled([1, 2])
    error = RuntimeError("refused")
    batch.fail(error)
    for future in futures:
        assert future.done() and future.exception(0) is error
        with pytest.raises(RuntimeError, match="refused"):
            future.result(0)


def test_the_first_outcome_wins() -> None:
    batch, futures = filled([1])
    batch.complete(3)
    batch.fail(RuntimeError("late"))
    assert futures[0].result(0).offset == 3


def test_result_waits_for_the_outcome_and_times_out_without_one() -> None:
    batch, futures = filled([1])
    assert not futures[0].done() and futures[0].running()
    with pytest.raises(TimeoutError):
        futures[0].result(0.01)
    threading.Timer(0.05, batch.complete, args=(40,)).start()
    assert futures[0].result(5).offset == 40


def test_a_sent_record_cannot_be_cancelled() -> None:
    _, futures = filled([1])
    assert futures[0].cancel() is False
    assert not futures[0].cancelled()


def test_callbacks_run_once_per_record_in_registration_order() -> None:
    batch, _ = filled([1, 2, 3])
    seen: list[tuple[int, int]] = []
    for index in (2, 0, 1):
        batch.result.add_callback(index, lambda metadata, error, index=index: seen.append((index, metadata.offset)))
    batch.complete(10)
    batch.complete(10)
    assert seen == [(2, 12), (0, 10), (1, 11)]


def test_a_callback_added_after_the_outcome_runs_at_once() -> None:
    batch, futures = filled([1])
    batch.fail(ValueError("gone"))
    errors: list[BaseException | None] = []
    batch.result.add_callback(0, lambda metadata, error: errors.append(error))
    done: list[FutureRecordMetadata] = []
    futures[0].add_done_callback(done.append)
    assert isinstance(errors[0], ValueError) and done == [futures[0]]


def test_add_done_callback_passes_the_future_itself() -> None:
    batch, futures = filled([1, 2])
    done: list[FutureRecordMetadata] = []
    futures[1].add_done_callback(done.append)
    batch.complete(0)
    assert done == [futures[1]] and done[0].result(0).offset == 1


def test_a_failing_callback_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    batch, _ = filled([1, 2])
    seen: list[int] = []

    def broken(metadata: RecordMetadata | None, error: BaseException | None) -> None:
        raise RuntimeError("callback bug")

    batch.result.add_callback(0, broken)
    batch.result.add_callback(1, lambda metadata, error: seen.append(metadata.offset))
    with caplog.at_level(logging.ERROR):
        batch.complete(5)
    assert seen == [6]
    assert "delivery callback" in caplog.text


def test_a_result_built_already_failed_reports_to_its_callback() -> None:
    refused = ProduceResult("orders", -1)
    errors: list[BaseException | None] = []
    refused.add_callback(0, lambda metadata, error: errors.append(error))
    refused.fail(ValueError("too large"))
    future = FutureRecordMetadata(refused, 0)
    assert isinstance(errors[0], ValueError) and isinstance(future.exception(0), ValueError)


records = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2**41),
        st.none() | st.binary(max_size=300),
        st.none() | st.binary(max_size=20_000),
    ),
    min_size=1,
    max_size=80,
)


@settings(max_examples=100, deadline=None)
@given(records)
def test_header_less_records_encode_exactly_as_the_record_builder_does(rows) -> None:
    batch = ProducerBatch(TP, 0.0, capacity=1 << 30)
    for stamp, key, value in rows:
        assert batch.try_append(stamp, key, value, ())
    batch.set_producer_state(9, 1, 0, False)
    expected = build_batch([Record(i, stamp, key, value) for i, (stamp, key, value) in enumerate(rows)],
                           producer_id=9, producer_epoch=1, base_sequence=0)
    assert bytes(batch.encode()) == expected


@settings(max_examples=100, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**31 - 1),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.none() | st.binary(max_size=10_000),
    st.none() | st.binary(max_size=10_000),
)
def test_one_record_encodes_like_encode_record_into_for_any_deltas(offset_delta, timestamp_delta, key, value) -> None:
    reference = bytearray()
    # The first record (offset delta 0) sets the base timestamp: its delta is always 0.
    encode_record_into(reference, offset_delta, timestamp_delta if offset_delta else 0, key, value, ())
    batch = ProducerBatch(TopicPartition("t", 0), 0.0, capacity=1 << 30)
    # A batch already holding offset_delta records whose first one was stamped 10**12.
    batch.record_count = offset_delta
    batch.base_timestamp = batch.max_timestamp = 10**12
    assert batch.append(10**12 + timestamp_delta, key, value) is False
    assert batch.seal()[HEADER_SIZE:] == reference
