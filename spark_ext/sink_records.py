"""Rows of Arrow record batches turned into the records a producer sends.

Executors receive ``pyarrow.RecordBatch``es whose columns are named as in
the DataFrame; :class:`SinkColumns` (checked on the driver) says which ones
to read. Strings are sent as UTF-8. A null topic in a row is an error (no
topic option to fall back on); a null partition leaves the choice to the
producer's partitioner; a null key or value is sent as null.
"""

from __future__ import annotations

from typing import Iterable, Iterator, NamedTuple

import pyarrow as pa

from spark_ext.sink_schema import SinkColumns

Headers = tuple[tuple[str, "bytes | str | None"], ...]


class SinkDataError(ValueError):
    """A row the sink cannot write; ``column`` names the culprit."""

    def __init__(self, column: str, problem: str) -> None:
        self.column = column
        super().__init__(f"spate sink column '{column}': {problem}")


class OutgoingRecord(NamedTuple):
    topic: str
    key: bytes | str | None
    value: bytes | str | None
    partition: int | None
    headers: Headers


def records_of(batches: Iterable[pa.RecordBatch], columns: SinkColumns, topic: str | None) -> Iterator[OutgoingRecord]:
    """Every row of ``batches`` as an OutgoingRecord; ``topic`` (the option) overrides the topic column."""
    for batch in batches:
        yield from _records_of_batch(batch, columns, topic)


def _column(batch: pa.RecordBatch, name: str | None) -> list | None:
    if name is None:
        return None
    index = batch.schema.get_field_index(name)
    if index < 0:
        raise SinkDataError(name, f"missing from the data the task received (columns: {batch.schema.names})")
    return batch.column(index).to_pylist()


def _records_of_batch(batch: pa.RecordBatch, columns: SinkColumns, topic: str | None) -> Iterator[OutgoingRecord]:
    rows = batch.num_rows
    if rows == 0:
        return
    values = _column(batch, columns.value)
    keys = _column(batch, columns.key) or [None] * rows
    topics = None if topic is not None else _column(batch, columns.topic)
    partitions = _column(batch, columns.partition) or [None] * rows
    header_lists = _column(batch, columns.headers)
    for row in range(rows):
        row_topic = topic if topics is None else topics[row]
        if row_topic is None or row_topic == "":
            raise SinkDataError(
                columns.topic or "topic",
                "null or empty topic in the data; set the topic option to write rows without one",
            )
        partition = partitions[row]
        if partition is not None and partition < 0:
            raise SinkDataError(columns.partition or "partition", f"negative partition {partition}")
        headers: Headers = ()
        if header_lists is not None and header_lists[row]:
            headers = tuple(_header(h, columns) for h in header_lists[row])
        yield OutgoingRecord(row_topic, keys[row], values[row], partition, headers)


def _header(item: dict | None, columns: SinkColumns) -> tuple[str, bytes | str | None]:
    name = columns.headers or "headers"
    if item is None:
        raise SinkDataError(name, "a header entry is null")
    key = item[columns.header_key]
    if key is None:
        raise SinkDataError(name, "a header key is null")
    return key, item[columns.header_value]
