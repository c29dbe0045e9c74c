"""Delta tables of many small files for the maintenance tests, written through the sink's own commit path."""

from __future__ import annotations

import pyarrow as pa

from spark_ext.delta.parquet_files import FileLayout, ParquetFilesWriter
from spark_ext.delta.table import AppTransaction, DeltaLog

SCHEMA = pa.schema([("day", pa.string()), ("offset", pa.int64()), ("value", pa.string())])


def rows(start: int, count: int, days: int = 1) -> pa.RecordBatch:
    offsets = list(range(start, start + count))
    return pa.RecordBatch.from_pydict({"day": [f"2024-05-0{1 + o % days}" for o in offsets], "offset": offsets,
                                       "value": [f"v{o}" for o in offsets]}, schema=SCHEMA)


def append(path: str, start: int, count: int, *, batch: int, partition_by: tuple[str, ...] = (),
           app_id: str = "writer") -> None:
    """One commit of ``count`` rows from offset ``start``, as the sink's micro-batch ``batch`` commits it."""
    layout = FileLayout(path, SCHEMA, partition_by)
    writer = ParquetFilesWriter(layout, f"part-{batch:05d}")
    writer.write(rows(start, count, days=2 if partition_by else 1))
    DeltaLog(path).commit(writer.close(), SCHEMA, partition_by, app_transaction=AppTransaction(app_id, batch))


def small_files_table(path: str, commits: int, per_commit: int = 10, partition_by: tuple[str, ...] = ()) -> None:
    for n in range(commits):
        append(path, n * per_commit, per_commit, batch=n, partition_by=partition_by)


def content(table) -> list[tuple]:
    """Every row of a ``deltalake.DeltaTable``, sorted: what a reader sees, whatever the files."""
    return sorted((r["day"], r["offset"], r["value"]) for r in table.to_pyarrow_table().to_pylist())
