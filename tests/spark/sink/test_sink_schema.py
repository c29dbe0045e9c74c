"""The DataFrame contract of Spark's Kafka sink, checked on the driver with errors naming the column."""

from __future__ import annotations

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from spark_ext.sink_schema import SinkSchemaError, sink_columns

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))


def schema(**columns) -> StructType:
    return StructType([StructField(name, data_type) for name, data_type in columns.items()])


def test_full_contract_is_accepted() -> None:
    columns = sink_columns(
        schema(topic=StringType(), key=BinaryType(), value=StringType(), partition=IntegerType(), headers=HEADERS),
        topic_option=None,
    )
    assert (columns.topic, columns.key, columns.value, columns.partition, columns.headers) == (
        "topic", "key", "value", "partition", "headers"
    )


def test_value_alone_with_a_topic_option_is_enough_and_extra_columns_are_ignored() -> None:
    columns = sink_columns(schema(value=BinaryType(), extra=DoubleType()), topic_option="t")
    assert columns.names == ("value",)


def test_topic_option_overrides_the_topic_column_whatever_its_type() -> None:
    columns = sink_columns(schema(topic=LongType(), value=BinaryType()), topic_option="t")
    assert columns.topic is None


def test_column_names_match_case_insensitively() -> None:
    columns = sink_columns(schema(Value=BinaryType(), TOPIC=StringType()), topic_option=None)
    assert (columns.value, columns.topic) == ("Value", "TOPIC")


def test_headers_struct_field_names_are_kept_as_spelled() -> None:
    headers = ArrayType(StructType([StructField("Value", StringType()), StructField("KEY", StringType())]))
    columns = sink_columns(schema(value=BinaryType(), headers=headers), topic_option="t")
    assert (columns.header_key, columns.header_value) == ("KEY", "Value")


@pytest.mark.parametrize(
    ("columns", "topic_option", "culprit", "words"),
    [
        ({"key": BinaryType()}, "t", "value", "required"),
        ({"value": IntegerType()}, "t", "value", "string or binary"),
        ({"value": BinaryType()}, None, "topic", "topic option"),
        ({"value": BinaryType(), "topic": BinaryType()}, None, "topic", "string"),
        ({"value": BinaryType(), "key": LongType()}, "t", "key", "string or binary"),
        ({"value": BinaryType(), "partition": StringType()}, "t", "partition", "int"),
        ({"value": BinaryType(), "headers": StringType()}, "t", "headers", "array<struct"),
        ({"value": BinaryType(), "headers": ArrayType(StructType([StructField("key", StringType())]))}, "t",
         "headers", "array<struct"),
        ({"value": BinaryType(), "headers": ArrayType(StructType(
            [StructField("key", BinaryType()), StructField("value", BinaryType())]))}, "t", "headers", "array<struct"),
    ],
)
def test_bad_columns_fail_naming_the_column(columns, topic_option, culprit, words) -> None:
    with pytest.raises(SinkSchemaError) as info:
        sink_columns(schema(**columns), topic_option=topic_option)
    assert info.value.column == culprit
    assert f"'{culprit}'" in str(info.value)
    assert words in str(info.value)
