"""Arrow rows become producer records: strings as given, nulls kept, the topic option winning."""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ext.sink_records import OutgoingRecord, SinkDataError, records_of
from spark_ext.sink_schema import SinkColumns

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))


def test_every_contract_column_is_read() -> None:
    batch = pa.record_batch(
        {
            "topic": pa.array(["a", "b"]),
            "key": pa.array([b"k1", None], pa.binary()),
            "value": pa.array(["v1", None]),
            "partition": pa.array([2, None], pa.int32()),
            "headers": pa.array([[{"key": "h", "value": b"x"}], None], HEADER_TYPE),
        }
    )
    columns = SinkColumns(value="value", topic="topic", key="key", partition="partition", headers="headers")
    assert list(records_of([batch], columns, None)) == [
        OutgoingRecord("a", b"k1", "v1", 2, (("h", b"x"),)),
        OutgoingRecord("b", None, None, None, ()),
    ]


def test_topic_option_is_used_for_every_row() -> None:
    batch = pa.record_batch({"value": pa.array([b"1", b"2"])})
    records = list(records_of([batch, batch.slice(0, 0)], SinkColumns(value="value"), "fixed"))
    assert [r.topic for r in records] == ["fixed", "fixed"]


def test_null_topic_in_a_row_fails_naming_the_column() -> None:
    batch = pa.record_batch({"Topic": pa.array(["a", None]), "value": pa.array([b"1", b"2"])})
    with pytest.raises(SinkDataError) as info:
        list(records_of([batch], SinkColumns(value="value", topic="Topic"), None))
    assert info.value.column == "Topic"


def test_negative_partition_fails_naming_the_column() -> None:
    batch = pa.record_batch({"value": pa.array([b"1"]), "partition": pa.array([-3], pa.int32())})
    with pytest.raises(SinkDataError) as info:
        list(records_of([batch], SinkColumns(value="value", partition="partition"), "t"))
    assert info.value.column == "partition"


def test_null_header_key_fails() -> None:
    batch = pa.record_batch(
        {"value": pa.array([b"1"]), "headers": pa.array([[{"key": None, "value": b"x"}]], HEADER_TYPE)}
    )
    with pytest.raises(SinkDataError, match="header key"):
        list(records_of([batch], SinkColumns(value="value", headers="headers"), "t"))
