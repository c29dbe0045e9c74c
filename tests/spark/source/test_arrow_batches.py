"""Fetched record batches as Arrow record batches in the Kafka source schema."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from spark_ext.arrow_batches import ArrowBatchBuilder, arrow_schema, source_schema
from spark_ext.columnar import decode_columnar
from spate.client import FetchedBatch, TimestampType
from spate.records import Record, build_batch


def fetched(partition: int, first: int, count: int, *, kind=TimestampType.CREATE_TIME, topic="t") -> FetchedBatch:
    offsets = list(range(first, first + count))
    return FetchedBatch(
        topic=topic,
        partition=partition,
        offsets=offsets,
        timestamps=[1_700_000_000_000 + o for o in offsets],
        keys=[None if o % 2 else b"k%d" % o for o in offsets],
        values=[b"v%d" % o for o in offsets],
        headers=[(("h", b"%d" % o), ("n", None)) if o % 3 == 0 else () for o in offsets],
        timestamp_type=kind,
        next_offset=first + count,
    )


def test_the_arrow_schema_is_what_spark_expects_for_the_kafka_schema():
    schema = arrow_schema(True)
    assert schema.names == source_schema(True).fieldNames()
    assert schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert schema.field("partition").type == pa.int32() and schema.field("offset").type == pa.int64()


def test_rows_keep_offsets_keys_values_and_times_with_null_keys():
    builder = ArrowBatchBuilder()
    builder.add(fetched(2, 10, 3))
    table = builder.build().to_pydict()
    assert table["offset"] == [10, 11, 12]
    assert table["key"] == [b"k10", None, b"k12"]
    assert table["value"] == [b"v10", b"v11", b"v12"]
    assert table["topic"] == ["t"] * 3 and table["partition"] == [2] * 3
    assert table["timestamp"][0] == dt.datetime(2023, 11, 14, 22, 13, 20, 10_000, tzinfo=dt.timezone.utc)
    assert table["timestampType"] == [0, 0, 0]
    assert "headers" not in table


def test_headers_keep_order_repeats_and_null_values():
    builder = ArrowBatchBuilder(include_headers=True)
    builder.add(fetched(0, 0, 4))
    headers = builder.build().column("headers").to_pylist()
    assert headers[0] == [{"key": "h", "value": b"0"}, {"key": "n", "value": None}]
    assert headers[1] == []


def test_slices_of_several_fetched_batches_join_into_one_arrow_batch():
    builder = ArrowBatchBuilder()
    builder.add(fetched(0, 0, 5), 2, 5)
    builder.add(fetched(1, 0, 3, kind=TimestampType.LOG_APPEND_TIME))
    builder.add(fetched(1, 3, 4), 0, 0)
    batch = builder.build()
    assert batch.num_rows == 6
    assert batch.column("offset").to_pylist() == [2, 3, 4, 0, 1, 2]
    assert batch.column("partition").to_pylist() == [0, 0, 0, 1, 1, 1]
    assert batch.column("timestampType").to_pylist() == [0, 0, 0, 1, 1, 1]
    assert builder.build() is None


def test_the_builder_reports_full_at_its_row_limit():
    builder = ArrowBatchBuilder(max_rows=4)
    builder.add(fetched(0, 0, 3))
    assert not builder.full
    builder.add(fetched(0, 3, 1))
    assert builder.full
    with pytest.raises(ValueError):
        ArrowBatchBuilder(max_rows=0)


def test_the_builder_reports_full_once_its_keys_and_values_reach_the_byte_limit():
    records = [Record(i, 0, b"k", b"v" * 99) for i in range(300)]
    columns = decode_columnar(build_batch(records))
    builder = ArrowBatchBuilder(max_bytes=200 * 100)
    builder.add_columns("t", 0, columns, 0, 150)
    assert not builder.full
    builder.add_columns("t", 0, columns, 150, 200)  # a slice counts only its own bytes
    assert builder.full
    with pytest.raises(ValueError):
        ArrowBatchBuilder(max_bytes=0)
