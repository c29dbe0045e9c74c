"""The source's schema, and fetched record batches turned into ``pyarrow.RecordBatch``es.

The schema is Spark's Kafka source schema, column for column::

    key binary, value binary, topic string, partition int, offset long,
    timestamp timestamp, timestampType int
    [, headers array<struct<key: string, value: binary>>]   -- with includeHeaders

Fetched batches arrive as parallel Python lists (one per column), so each
Arrow column is built by one pyarrow call over a list; no Python object per
row is created here. Several fetched batches are gathered into one Arrow
batch of up to ``max_rows`` rows, since Spark handles a few large Arrow
batches much faster than many small ones.
"""

from __future__ import annotations

from functools import lru_cache

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from broker_core.client import FetchedBatch

DEFAULT_MAX_ROWS = 65_536

_HEADER_TYPE = StructType([StructField("key", StringType()), StructField("value", BinaryType())])


def source_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema (every column nullable, as there)."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", ArrayType(_HEADER_TYPE)))
    return StructType(fields)


@lru_cache(maxsize=2)
def arrow_schema(include_headers: bool = False) -> pa.Schema:
    """The Arrow schema Spark expects for :func:`source_schema` (timestamps in µs, UTC)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(source_schema(include_headers), timezone="UTC")


class ArrowBatchBuilder:
    """Gathers slices of fetched batches of one partition and emits Arrow record batches."""

    def __init__(self, include_headers: bool = False, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if max_rows < 1:
            raise ValueError(f"max_rows must be positive, not {max_rows}")
        self.schema = arrow_schema(include_headers)
        self.include_headers = include_headers
        self.max_rows = max_rows
        self._reset()

    def _reset(self) -> None:
        self._keys: list[bytes | None] = []
        self._values: list[bytes | None] = []
        self._offsets: list[int] = []
        self._timestamps: list[int] = []
        self._headers: list[tuple] = []
        # Runs of (topic, partition, timestampType, row count): constant columns are built per run.
        self._runs: list[tuple[str, int, int, int]] = []

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def full(self) -> bool:
        return len(self._offsets) >= self.max_rows

    def add(self, batch: FetchedBatch, start: int = 0, stop: int | None = None) -> None:
        """Add rows ``[start, stop)`` of ``batch`` (all of them by default)."""
        stop = len(batch) if stop is None else stop
        if stop <= start:
            return
        whole = start == 0 and stop == len(batch)
        if whole:
            self._keys += batch.keys
            self._values += batch.values
            self._offsets += batch.offsets
            self._timestamps += batch.timestamps
            if self.include_headers:
                self._headers += batch.headers
        else:
            self._keys += batch.keys[start:stop]
            self._values += batch.values[start:stop]
            self._offsets += batch.offsets[start:stop]
            self._timestamps += batch.timestamps[start:stop]
            if self.include_headers:
                self._headers += batch.headers[start:stop]
        kind = int(batch.timestamp_type)
        last = self._runs[-1] if self._runs else None
        if last is not None and last[:3] == (batch.topic, batch.partition, kind):
            self._runs[-1] = (batch.topic, batch.partition, kind, last[3] + stop - start)
        else:
            self._runs.append((batch.topic, batch.partition, kind, stop - start))

    def build(self) -> pa.RecordBatch | None:
        """The gathered rows as one record batch (None when empty); the builder starts over."""
        if not self._offsets:
            return None
        schema = self.schema
        topics: list[str] = []
        partitions: list[int] = []
        kinds: list[int] = []
        for topic, partition, kind, count in self._runs:
            topics += [topic] * count
            partitions += [partition] * count
            kinds += [kind] * count
        columns = [
            pa.array(self._keys, pa.binary()),
            pa.array(self._values, pa.binary()),
            pa.array(topics, pa.string()),
            pa.array(partitions, pa.int32()),
            pa.array(self._offsets, pa.int64()),
            pa.array(self._timestamps, pa.timestamp("ms", tz="UTC")).cast(schema.field("timestamp").type),
            pa.array(kinds, pa.int32()),
        ]
        if self.include_headers:
            columns.append(pa.array(self._headers, schema.field("headers").type))
        self._reset()
        return pa.RecordBatch.from_arrays(columns, schema=schema)
