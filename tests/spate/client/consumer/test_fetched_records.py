"""Decoding a partition's fetched bytes: gaps, markers, mid-batch starts, cut-off batches, aborts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.client.consumer.fetched_records import decode_partition_records, decode_raw_batch, select_partition_batches
from spate.records import (
    Compression,
    ControlType,
    CorruptRecordError,
    Record,
    TimestampType,
    build_batch,
    build_control_batch,
)
from spate.structs import IsolationLevel


@dataclass
class Aborted:
    producer_id: int
    first_offset: int


def batch(first: int, count: int, *, step: int = 1, last_offset_delta: int | None = None, **kwargs) -> bytes:
    records = [Record(first + i * step, 1000 + first + i * step, b"k%d" % (first + i * step), b"v", ()) for i in range(count)]
    return build_batch(records, base_offset=first, last_offset_delta=last_offset_delta, **kwargs)


def txn_batch(first: int, count: int, producer_id: int) -> bytes:
    return batch(first, count, producer_id=producer_id, producer_epoch=0, base_sequence=0, is_transactional=True)


def marker(offset: int, kind: ControlType, producer_id: int) -> bytes:
    return build_control_batch(kind, producer_id, 0, 0, timestamp=5, base_offset=offset)


def offsets_of(result) -> list[int]:
    return [offset for b in result.batches for offset in b.offsets]


def decode(data: bytes, fetch_offset: int = 0, **kwargs):
    return decode_partition_records("t", 2, data, fetch_offset, **kwargs)


def test_consecutive_batches_decode_into_one_fetched_batch_each() -> None:
    result = decode(batch(0, 3) + batch(3, 2))
    assert [b.offsets for b in result.batches] == [[0, 1, 2], [3, 4]]
    assert result.next_offset == 5
    first = result.batches[0]
    assert (first.topic, first.partition, first.keys[1], first.values[1], first.timestamps[1]) == ("t", 2, b"k1", b"v", 1001)


def test_a_fetch_that_starts_mid_batch_skips_the_records_below_the_position() -> None:
    result = decode(batch(10, 5), fetch_offset=12)
    assert offsets_of(result) == [12, 13, 14]
    assert len(result.batches[0].keys) == len(result.batches[0].headers) == 3
    assert result.next_offset == 15


def test_batches_wholly_below_the_fetch_offset_are_skipped() -> None:
    assert offsets_of(decode(batch(0, 3) + batch(3, 3), fetch_offset=4)) == [4, 5]


def test_control_batches_are_never_returned_but_the_position_moves_past_them() -> None:
    data = batch(0, 2) + marker(2, ControlType.COMMIT, 9) + batch(3, 1)
    result = decode(data)
    assert offsets_of(result) == [0, 1, 3]
    assert result.next_offset == 4


def test_fetched_bytes_holding_only_a_marker_still_advance_the_position() -> None:
    result = decode(marker(7, ControlType.COMMIT, 9), fetch_offset=7)
    assert result.batches == [] and result.next_offset == 8


def test_compaction_gaps_inside_and_after_a_batch_are_kept_as_gaps() -> None:
    result = decode(batch(0, 3, step=2, last_offset_delta=9))
    assert offsets_of(result) == [0, 2, 4]
    assert result.batches[0].next_offset == result.next_offset == 10


def test_a_trailing_batch_cut_short_by_the_fetch_size_is_dropped() -> None:
    whole, cut = batch(0, 3), batch(3, 3)
    result = decode(whole + cut[: len(cut) - 7])
    assert offsets_of(result) == [0, 1, 2]
    assert result.next_offset == 3 and result.oversized_batch_offset is None


def test_a_lone_batch_larger_than_the_fetch_is_reported_as_oversized() -> None:
    big = batch(40, 50)
    result = decode(big[:100], fetch_offset=40)
    assert result.batches == [] and result.oversized_batch_offset == 40 and result.next_offset == 40


def test_empty_or_missing_records_mean_nothing_new() -> None:
    for data in (None, b""):
        result = decode(data, fetch_offset=5)
        assert result.batches == [] and result.next_offset == 5


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE])
def test_compressed_batches_decode_like_plain_ones(codec: Compression) -> None:
    assert offsets_of(decode(batch(0, 20, compression=codec), fetch_offset=5)) == list(range(5, 20))


def test_log_append_time_batches_give_every_record_the_batch_timestamp() -> None:
    data = build_batch(
        [Record(0, 1, None, b"a"), Record(1, 2, None, b"b")],
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=777,
    )
    fetched = decode(data).batches[0]
    assert fetched.timestamps == [777, 777] and fetched.timestamp_type == TimestampType.LOG_APPEND_TIME


def test_a_crc_mismatch_is_corrupt_unless_crc_checks_are_off() -> None:
    data = bytearray(batch(0, 3))
    data[30] ^= 0x01  # inside baseTimestamp: covered by the CRC, harmless to decoding
    with pytest.raises(CorruptRecordError):
        decode(bytes(data))
    assert offsets_of(decode(bytes(data), check_crcs=False)) == [0, 1, 2]


def test_read_committed_skips_aborted_transactions_and_keeps_committed_ones() -> None:
    data = (
        txn_batch(0, 2, producer_id=7)  # aborted below
        + txn_batch(2, 2, producer_id=8)  # committed
        + marker(4, ControlType.ABORT, 7)
        + marker(5, ControlType.COMMIT, 8)
        + batch(6, 1)
    )
    aborted = [Aborted(producer_id=7, first_offset=0)]
    committed = decode(data, isolation_level=IsolationLevel.READ_COMMITTED, aborted_transactions=aborted)
    assert offsets_of(committed) == [2, 3, 6]
    assert committed.next_offset == 7
    uncommitted = decode(data, isolation_level=IsolationLevel.READ_UNCOMMITTED, aborted_transactions=aborted)
    assert offsets_of(uncommitted) == [0, 1, 2, 3, 6]


def test_a_producers_next_transaction_after_its_abort_marker_is_read() -> None:
    data = txn_batch(0, 1, 7) + marker(1, ControlType.ABORT, 7) + txn_batch(2, 1, 7) + marker(3, ControlType.COMMIT, 7)
    result = decode(data, isolation_level=IsolationLevel.READ_COMMITTED, aborted_transactions=[Aborted(7, 0)])
    assert offsets_of(result) == [2]


def test_an_aborted_transaction_starting_later_does_not_hide_earlier_data_of_its_producer() -> None:
    data = txn_batch(0, 1, 7) + marker(1, ControlType.COMMIT, 7) + txn_batch(2, 1, 7) + marker(3, ControlType.ABORT, 7)
    result = decode(data, isolation_level=IsolationLevel.READ_COMMITTED, aborted_transactions=[Aborted(7, 2)])
    assert offsets_of(result) == [0]
    assert result.next_offset == 4


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(0, 3), st.booleans()), min_size=1, max_size=8),
    st.data(),
)
def test_every_data_record_at_or_above_the_fetch_offset_comes_out_once_in_order(layout, data) -> None:
    chunks, expected, offset = [], [], 0
    for count, gap, is_marker in layout:
        if is_marker:
            chunks.append(marker(offset, ControlType.COMMIT, 3))
            offset += 1
        else:
            chunks.append(batch(offset, count, last_offset_delta=count - 1 + gap))
            expected += list(range(offset, offset + count))
            offset += count + gap
    fetch_offset = data.draw(st.integers(0, offset))
    result = decode(b"".join(chunks), fetch_offset=fetch_offset)
    assert offsets_of(result) == [o for o in expected if o >= fetch_offset]
    assert result.next_offset == max(offset, fetch_offset)


def select(data: bytes, fetch_offset: int = 0, **kwargs):
    return select_partition_batches("t", 2, data, fetch_offset, **kwargs)


def test_raw_selection_hands_out_data_batches_undecoded_with_where_each_starts() -> None:
    data = batch(0, 3) + marker(3, ControlType.COMMIT, 9) + batch(4, 2)
    result = select(data, fetch_offset=1)
    assert [(b.header.base_offset, b.start_offset, b.next_offset) for b in result.batches] == [(0, 1, 3), (4, 4, 6)]
    first = result.batches[0]
    assert bytes(first.buffer[first.position:first.position + first.header.size]) == batch(0, 3)
    assert result.next_offset == 6


def test_raw_selection_drops_aborted_transactions_and_markers_under_read_committed() -> None:
    data = (
        txn_batch(0, 2, producer_id=7)
        + txn_batch(2, 2, producer_id=8)
        + marker(4, ControlType.ABORT, 7)
        + marker(5, ControlType.COMMIT, 8)
        + batch(6, 1)
    )
    aborted = [Aborted(producer_id=7, first_offset=0)]
    committed = select(data, isolation_level=IsolationLevel.READ_COMMITTED, aborted_transactions=aborted)
    assert [b.header.base_offset for b in committed.batches] == [2, 6]
    assert committed.next_offset == 7
    uncommitted = select(data, isolation_level=IsolationLevel.READ_UNCOMMITTED, aborted_transactions=aborted)
    assert [b.header.base_offset for b in uncommitted.batches] == [0, 2, 6]


def test_raw_selection_keeps_compaction_gaps_in_next_offset() -> None:
    result = select(batch(0, 3, step=2, last_offset_delta=9))
    assert [b.next_offset for b in result.batches] == [10] and result.next_offset == 10


def test_raw_selection_checks_crcs_but_leaves_records_to_the_reader() -> None:
    data = bytearray(batch(0, 3))
    data[30] ^= 0x01
    with pytest.raises(CorruptRecordError):
        select(bytes(data))
    assert len(select(bytes(data), check_crcs=False).batches) == 1


def test_decoding_the_raw_selection_gives_the_same_records_as_decoding_directly() -> None:
    data = batch(0, 3) + marker(3, ControlType.COMMIT, 9) + batch(4, 5, compression=Compression.LZ4)
    for fetch_offset in (0, 1, 5):
        decoded = [decode_raw_batch(b) for b in select(data, fetch_offset=fetch_offset).batches]
        direct = decode(data, fetch_offset=fetch_offset).batches
        assert [(b.offsets, b.values, b.next_offset) for b in decoded] == [
            (b.offsets, b.values, b.next_offset) for b in direct
        ]


def test_records_given_as_a_view_of_the_response_are_selected_in_place_and_decode_alike() -> None:
    data = batch(0, 3) + marker(3, ControlType.COMMIT, 9) + batch(4, 2)
    frame = b"head" + data + b"tail"
    view = memoryview(frame)[4 : 4 + len(data)]
    selected = select(view)
    assert all(b.buffer.obj is frame for b in selected.batches)  # no copy of the response
    assert [decode_raw_batch(b).offsets for b in selected.batches] == [[0, 1, 2], [4, 5]]


def test_a_view_of_mutable_bytes_is_copied_before_it_is_kept() -> None:
    data = bytearray(batch(0, 3))
    selected = select(memoryview(data))
    data[:] = b"\x00" * len(data)
    assert decode_raw_batch(selected.batches[0]).offsets == [0, 1, 2]
