"""Which input columns the sink writes, checked against Spark's Kafka sink contract.

==============  ===========================================  =========================================
column          type                                         meaning
==============  ===========================================  =========================================
``topic``       string                                       the row's topic, unless the ``topic``
                                                             option is set (the option wins)
``key``         string or binary, optional                   the record key (null: no key)
``value``       string or binary, required                   the record value (null: a tombstone)
``partition``   int (any integral type), optional            the partition (null: the partitioner's)
``headers``     array<struct<key string, value binary>>      record headers (a header value may also
                optional                                     be a string)
==============  ===========================================  =========================================

Column names match case-insensitively, as Spark resolves them; other
columns are ignored. Problems raise :class:`SinkSchemaError` naming the
column, when the query starts rather than in a task.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

_BYTES_LIKE = (StringType, BinaryType)
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
HEADERS_TYPE = "array<struct<key: string, value: binary>>"


class SinkSchemaError(ValueError):
    """The DataFrame cannot be written by the sink; ``column`` names the culprit (or the topic option)."""

    def __init__(self, column: str, problem: str) -> None:
        self.column = column
        super().__init__(f"spate sink column '{column}': {problem}")


@dataclass(frozen=True)
class SinkColumns:
    """The actual names of the contract columns in the input (None: absent). Picklable."""

    value: str
    topic: str | None = None
    key: str | None = None
    partition: str | None = None
    headers: str | None = None
    # Field names inside the headers structs, as spelled in the input.
    header_key: str = "key"
    header_value: str = "value"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n in (self.topic, self.key, self.value, self.partition, self.headers) if n is not None)


def sink_columns(schema: StructType, *, topic_option: str | None) -> SinkColumns:
    """Find and check the contract columns of ``schema``; raise SinkSchemaError on the first problem."""
    fields = {f.name.lower(): f for f in schema.fields}

    value = fields.get("value")
    if value is None:
        present = ", ".join(f.name for f in schema.fields) or "none"
        raise SinkSchemaError("value", f"required column not found (columns: {present})")
    _check_bytes_like(value.name, value.dataType)

    topic = fields.get("topic")
    if topic is not None:
        if not isinstance(topic.dataType, StringType) and topic_option is None:
            raise SinkSchemaError(topic.name, f"must be a string, not {topic.dataType.simpleString()}")
    elif topic_option is None:
        raise SinkSchemaError("topic", "no topic column and no topic option: set .option('topic', ...) "
                                       "or add a string column named topic")

    key = fields.get("key")
    if key is not None:
        _check_bytes_like(key.name, key.dataType)

    partition = fields.get("partition")
    if partition is not None and not isinstance(partition.dataType, _INTEGRAL):
        raise SinkSchemaError(partition.name, f"must be an int, not {partition.dataType.simpleString()}")

    headers = fields.get("headers")
    header_names = ("key", "value")
    if headers is not None:
        header_names = _check_headers(headers.name, headers.dataType)

    return SinkColumns(
        value=value.name,
        # The topic option overrides the column, so the column is not even read.
        topic=topic.name if topic is not None and topic_option is None else None,
        key=key.name if key is not None else None,
        partition=partition.name if partition is not None else None,
        headers=headers.name if headers is not None else None,
        header_key=header_names[0],
        header_value=header_names[1],
    )


def _check_bytes_like(name: str, data_type: DataType) -> None:
    if not isinstance(data_type, _BYTES_LIKE):
        raise SinkSchemaError(name, f"must be a string or binary, not {data_type.simpleString()}")


def _check_headers(name: str, data_type: DataType) -> tuple[str, str]:
    """The struct's key and value field names as spelled."""
    problem = f"must be {HEADERS_TYPE}, not {data_type.simpleString()}"
    if not isinstance(data_type, ArrayType) or not isinstance(data_type.elementType, StructType):
        raise SinkSchemaError(name, problem)
    element = {f.name.lower(): f for f in data_type.elementType.fields}
    if set(element) != {"key", "value"} or len(data_type.elementType.fields) != 2:
        raise SinkSchemaError(name, problem)
    if not isinstance(element["key"].dataType, StringType) or not isinstance(element["value"].dataType, _BYTES_LIKE):
        raise SinkSchemaError(name, problem)
    return element["key"].name, element["value"].name
