"""Batches decoded into columns become the same Arrow rows as batches of Python lists."""

from __future__ import annotations

from spark_ext.arrow_batches import ArrowBatchBuilder
from spark_ext.columnar import ColumnarBatch, decode_columnar
from spate.client import FetchedBatch, TimestampType
from spate.records import Record, build_batch, decode_batch_columns


def records(first: int, count: int, *, headers: bool = False) -> list[Record]:
    return [
        Record(
            offset=o,
            timestamp=1_700_000_000_000 + o,
            key=None if o % 2 else b"k%d" % o,
            value=b"v" * (o % 40),
            headers=(("h", b"%d" % o), ("n", None)) if headers and o % 3 == 0 else (),
        )
        for o in range(first, first + count)
    ]


def columnar(first: int, count: int, **kwargs) -> ColumnarBatch:
    return decode_columnar(build_batch(records(first, count, **kwargs), base_offset=first), include_headers=True,
                           vector_threshold=1)


def as_lists(topic: str, partition: int, first: int, count: int, **kwargs) -> FetchedBatch:
    c = decode_batch_columns(build_batch(records(first, count, **kwargs), base_offset=first))
    return FetchedBatch(topic, partition, c.offsets, c.timestamps, c.keys, c.values, c.headers,
                        TimestampType.CREATE_TIME, first + count)


def test_columns_and_lists_of_the_same_records_build_equal_arrow_batches():
    from_columns = ArrowBatchBuilder(include_headers=True)
    from_columns.add_columns("topic-é", 3, columnar(0, 300, headers=True), 5, 290)
    from_lists = ArrowBatchBuilder(include_headers=True)
    from_lists.add(as_lists("topic-é", 3, 0, 300, headers=True), 5, 290)
    assert from_columns.build().equals(from_lists.build())


def test_columns_and_lists_keep_the_order_they_were_added_in():
    builder = ArrowBatchBuilder()
    builder.add(as_lists("t", 0, 0, 3))
    builder.add_columns("t", 0, columnar(3, 4))
    builder.add(as_lists("t", 1, 7, 2))
    builder.add_columns("t", 1, columnar(9, 3), 1, 3)
    assert len(builder) == 11
    batch = builder.build()
    assert batch.column("offset").to_pylist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
    assert batch.column("partition").to_pylist() == [0] * 7 + [1] * 4
    assert batch.column("topic").to_pylist() == ["t"] * 11
    assert batch.column("key").to_pylist()[:4] == [b"k0", None, b"k2", None]
    assert builder.build() is None


def test_rows_without_headers_get_empty_header_lists():
    builder = ArrowBatchBuilder(include_headers=True)
    builder.add_columns("t", 0, columnar(0, 4))
    assert builder.build().column("headers").to_pylist() == [[], [], [], []]


def test_log_append_time_columns_report_timestamp_type_one():
    batch = build_batch(records(0, 2), timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=1_000)
    builder = ArrowBatchBuilder()
    builder.add_columns("t", 0, decode_columnar(batch))
    built = builder.build()
    assert built.column("timestampType").to_pylist() == [1, 1]
    assert [t.timestamp() for t in built.column("timestamp").to_pylist()] == [1.0, 1.0]


def test_an_empty_slice_adds_nothing():
    builder = ArrowBatchBuilder()
    builder.add_columns("t", 0, columnar(0, 3), 2, 2)
    assert len(builder) == 0 and builder.build() is None
