"""The source's schema, and fetched record batches turned into ``pyarrow.RecordBatch``es.

The schema is Spark's Kafka source schema, column for column::

    key binary, value binary, topic string, partition int, offset long,
    timestamp timestamp, timestampType int
    [, headers array<struct<key: string, value: binary>>]   -- with includeHeaders

Fetched batches arrive either as parallel Python lists (one per column),
each column then built by one pyarrow call over a list, or already decoded
into numpy and Arrow arrays (``spark_ext.columnar``), which are
only concatenated; the constant columns (topic, partition, timestampType)
are built from buffers. No Python object per row is created here. Several
fetched batches are gathered into one Arrow batch of up to ``max_rows``
rows or about ``max_bytes`` of keys and values, since Spark handles a few
large Arrow batches much faster than many small ones, but slows down again
on batches of many megabytes (1 KB values: 64 MB batches read about 1.7
times slower than 16 MB ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np
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

from spark_ext.columnar import ColumnarBatch
from spate.client import FetchedBatch
from spate.records.errors import CorruptRecordError
from spate.records.record import Header

DEFAULT_MAX_ROWS = 65_536
DEFAULT_MAX_BYTES = 16 << 20

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


class RecordLists(Protocol):
    """A batch's records as parallel lists: the client's ``FetchedBatch``, the codec's ``RecordColumns``."""

    offsets: list[int]
    timestamps: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[tuple[Header, ...]]


class ArrowBatchBuilder:
    """Gathers slices of fetched batches of one partition and emits Arrow record batches.

    Rows come either as a client :class:`FetchedBatch` (Python lists, gathered
    and converted together) or as a :class:`ColumnarBatch` (arrays already,
    kept as they are); a built batch concatenates them in the order added.
    """

    def __init__(
        self, include_headers: bool = False, max_rows: int = DEFAULT_MAX_ROWS, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if max_rows < 1:
            raise ValueError(f"max_rows must be positive, not {max_rows}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, not {max_bytes}")
        self.schema = arrow_schema(include_headers)
        self.include_headers = include_headers
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self._reset()

    def _reset(self) -> None:
        self._keys: list[bytes | None] = []
        self._values: list[bytes | None] = []
        self._offsets: list[int] = []
        self._timestamps: list[int] = []
        self._headers: list[tuple] = []
        # Rows added before the lists above, already as arrays.
        self._chunks: list[_Chunk] = []
        self._rows = 0
        self._bytes = 0
        # Runs of (topic, partition, timestampType, row count): constant columns are built per run.
        self._runs: list[tuple[str, int, int, int]] = []

    def __len__(self) -> int:
        return self._rows

    @property
    def full(self) -> bool:
        return self._rows >= self.max_rows or self._bytes >= self.max_bytes

    def add(self, batch: FetchedBatch, start: int = 0, stop: int | None = None) -> None:
        """Add rows ``[start, stop)`` of a client-decoded batch (all of them by default)."""
        self.add_lists(batch.topic, batch.partition, int(batch.timestamp_type), batch, start, stop)

    def add_lists(
        self, topic: str, partition: int, timestamp_type: int, rows: RecordLists, start: int = 0,
        stop: int | None = None,
    ) -> None:
        """Add rows ``[start, stop)`` of a batch decoded into parallel lists (all of them by default).

        Lists from consecutive calls are converted together, so many small
        batches cost one pyarrow call per column, not one per batch.
        """
        stop = len(rows.offsets) if stop is None else stop
        if stop <= start:
            return
        keys, values = rows.keys[start:stop], rows.values[start:stop]
        self._bytes += sum(len(v) for v in values if v) + sum(len(k) for k in keys if k)
        self._keys += keys
        self._values += values
        self._offsets += rows.offsets[start:stop]
        self._timestamps += rows.timestamps[start:stop]
        if self.include_headers:
            self._headers += rows.headers[start:stop]
        self._add_run(topic, partition, timestamp_type, stop - start)

    def add_columns(
        self, topic: str, partition: int, columns: ColumnarBatch, start: int = 0, stop: int | None = None
    ) -> None:
        """Add rows ``[start, stop)`` of a batch decoded into columns (all of them by default)."""
        stop = len(columns) if stop is None else stop
        if stop <= start:
            return
        self._flush_lists()
        if start != 0 or stop != len(columns):
            columns = columns.slice(start, stop)
        headers = columns.headers if self.include_headers else None
        self._bytes += _data_bytes(columns.keys) + _data_bytes(columns.values)
        self._chunks.append(_Chunk(columns.keys, columns.values, columns.offsets, columns.timestamps, headers))
        self._add_run(topic, partition, int(columns.timestamp_type), stop - start)

    def _add_run(self, topic: str, partition: int, kind: int, count: int) -> None:
        self._rows += count
        last = self._runs[-1] if self._runs else None
        if last is not None and last[:3] == (topic, partition, kind):
            self._runs[-1] = (topic, partition, kind, last[3] + count)
        else:
            self._runs.append((topic, partition, kind, count))

    def _flush_lists(self) -> None:
        """Turn the rows gathered as lists into a chunk, so later chunks follow them."""
        if not self._offsets:
            return
        try:
            offsets, timestamps = np.array(self._offsets, np.int64), np.array(self._timestamps, np.int64)
        except OverflowError:
            raise CorruptRecordError("an offset or timestamp is outside int64") from None
        self._chunks.append(
            _Chunk(
                pa.array(self._keys, pa.binary()),
                pa.array(self._values, pa.binary()),
                offsets,
                timestamps,
                self._headers if self.include_headers and any(self._headers) else None,
            )
        )
        self._keys, self._values, self._offsets, self._timestamps, self._headers = [], [], [], [], []

    def build(self) -> pa.RecordBatch | None:
        """The gathered rows as one record batch (None when empty); the builder starts over."""
        if not self._rows:
            return None
        self._flush_lists()
        schema = self.schema
        chunks, runs, rows = self._chunks, self._runs, self._rows
        self._reset()
        columns = [
            _concat([c.keys for c in chunks]),
            _concat([c.values for c in chunks]),
            _concat([_constant_strings(topic, count) for topic, _, _, count in runs]),
            pa.array(np.repeat([r[1] for r in runs], [r[3] for r in runs]).astype(np.int32)),
            pa.array(_join([c.offsets for c in chunks])),
            pa.array(_join([c.timestamps for c in chunks]), pa.timestamp("ms", tz="UTC")).cast(
                schema.field("timestamp").type
            ),
            pa.array(np.repeat([r[2] for r in runs], [r[3] for r in runs]).astype(np.int32)),
        ]
        if self.include_headers:
            columns.append(_headers_column(chunks, rows, schema.field("headers").type))
        return pa.RecordBatch.from_arrays(columns, schema=schema)


@dataclass(frozen=True, slots=True)
class _Chunk:
    keys: pa.Array
    values: pa.Array
    offsets: np.ndarray
    timestamps: np.ndarray
    headers: list[tuple] | None  # None: no row of the chunk has headers (or they are not wanted)

    def __len__(self) -> int:
        return len(self.offsets)


def _data_bytes(array: pa.BinaryArray) -> int:
    """Bytes of the values of ``array`` (a slice counts only its own)."""
    if not len(array):
        return 0
    offsets = np.frombuffer(array.buffers()[1], np.int32)
    return int(offsets[array.offset + len(array)] - offsets[array.offset])


def _concat(arrays: list[pa.Array]) -> pa.Array:
    return arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays)


def _join(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _constant_strings(text: str, count: int) -> pa.Array:
    """``count`` copies of ``text`` as an Arrow string array, built from its buffers."""
    encoded = text.encode("utf-8")
    # int32 offsets, as Spark's string type needs; converting checks they fit.
    offsets = pa.array(np.arange(count + 1, dtype=np.int64) * len(encoded), pa.int32())
    return pa.Array.from_buffers(pa.string(), count, [None, offsets.buffers()[1], pa.py_buffer(encoded * count)])


def _headers_column(chunks: list[_Chunk], rows: int, kind: pa.DataType) -> pa.Array:
    if all(c.headers is None for c in chunks):
        # Every row has no headers: empty lists over an empty child array.
        return pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, np.int32)), pa.array([], kind.value_type))
    headers: list[tuple] = []
    for chunk in chunks:
        headers += chunk.headers if chunk.headers is not None else [()] * len(chunk)
    return pa.array(headers, kind)
