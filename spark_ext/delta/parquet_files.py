"""What an executor does for a Delta write: Parquet files straight into the table's storage.

A :class:`ParquetFilesWriter` takes the record batches of one Spark task,
splits them by partition values, and writes each partition's rows to
Parquet files (zstd) under the table's root through a pyarrow filesystem
(a local path or any URI pyarrow knows: ``s3://``, ``gs://``, ``abfs://``,
``hdfs://``). A file is closed and a new one started once it reaches the
target size. :meth:`ParquetFilesWriter.close` returns a :class:`DataFile`
per file, which the driver commits (:mod:`.table`).

Files get fresh random names, so a retried or replayed task never
overwrites a file an earlier attempt wrote: a file of an attempt that did not
get committed stays in storage, never referenced by the log, until vacuum
removes it. Partition columns are not stored in the files (Delta keeps them
in the log).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from spark_ext.delta.file_stats import FileStats
from spark_ext.delta.partition_values import directory_name, serialize

DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024
# Rows are gathered up to this much Arrow memory before they become one Parquet row group.
ROW_GROUP_BYTES = 64 * 1024 * 1024
COMPRESSION = "zstd"


@dataclass(frozen=True)
class DataFile:
    """One written file, as its Delta ``add`` action describes it. Picklable (a task's commit message)."""

    path: str  # relative to the table root, as stored (deltalake escapes it into the log's URI form)
    size: int
    partition_values: dict[str, str | None]
    modification_time: int  # ms since the epoch
    stats: str  # JSON
    num_records: int

    def add_action(self):
        from deltalake.transaction import AddAction

        return AddAction(self.path, self.size, dict(self.partition_values), self.modification_time, True, self.stats)


@dataclass(frozen=True)
class FileLayout:
    """Where and how a table's files are written. Picklable: the driver sends it to the executors."""

    table_uri: str
    schema: pa.Schema  # of the DataFrame, partition columns included
    partition_by: tuple[str, ...] = ()
    target_file_size: int = DEFAULT_TARGET_FILE_SIZE

    @property
    def data_schema(self) -> pa.Schema:
        """The schema of the Parquet files: the DataFrame's without the partition columns."""
        return pa.schema([f for f in self.schema if f.name not in self.partition_by])


@dataclass
class _OpenFile:
    relative_path: str
    partition_values: dict[str, str | None]
    stream: pa.NativeFile
    writer: pq.ParquetWriter
    stats: FileStats = field(default_factory=FileStats)
    pending: list[pa.RecordBatch] = field(default_factory=list)
    pending_bytes: int = 0


class ParquetFilesWriter:
    """Writes one task's rows; not thread-safe. ``file_prefix`` names the task (``part-00003``)."""

    def __init__(
        self,
        layout: FileLayout,
        file_prefix: str,
        *,
        filesystem: pafs.FileSystem | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.layout = layout
        self._prefix = file_prefix
        if filesystem is None:
            filesystem, root = pafs.FileSystem.from_uri(layout.table_uri)
        else:
            root = layout.table_uri
        self._fs = filesystem
        self._root = root.rstrip("/")
        self._clock = clock
        self._data_schema = layout.data_schema
        self._open: dict[tuple, _OpenFile] = {}
        self._done: list[DataFile] = []

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        batch = batch.cast(self.layout.schema) if batch.schema != self.layout.schema else batch
        for values, rows in self._split(batch):
            self._append(values, rows)

    def close(self) -> list[DataFile]:
        """Finish every open file and return all files this writer wrote."""
        for key in list(self._open):
            self._finish(key)
        return list(self._done)

    def abort(self) -> None:
        """Close open files without describing them; they stay unreferenced until vacuum removes them."""
        for open_file in self._open.values():
            try:
                open_file.writer.close()
                open_file.stream.close()
            except Exception:  # noqa: BLE001 - the task is failing already; its own error matters
                pass
        self._open.clear()

    # --- splitting by partition ---------------------------------------------------------------------

    def _split(self, batch: pa.RecordBatch):
        columns = self.layout.partition_by
        data = batch.select(self._data_schema.names)
        if not columns:
            yield (), data
            return
        table = pa.Table.from_batches([batch.select(list(columns))])
        combos = table.group_by(list(columns), use_threads=False).aggregate([]).to_pylist()
        if len(combos) == 1:
            yield tuple(combos[0][c] for c in columns), data
            return
        for combo in combos:
            mask = None
            for column in columns:
                value, array = combo[column], batch.column(column)
                match = pc.is_null(array) if value is None else pc.fill_null(pc.equal(array, value), False)
                mask = match if mask is None else pc.and_(mask, match)
            yield tuple(combo[c] for c in columns), data.filter(mask)

    # --- files --------------------------------------------------------------------------------------

    def _append(self, values: tuple, rows: pa.RecordBatch) -> None:
        open_file = self._open.get(values)
        if open_file is None:
            open_file = self._open[values] = self._start(values)
        open_file.stats.add(rows)
        open_file.pending.append(rows)
        open_file.pending_bytes += rows.nbytes
        if open_file.pending_bytes >= min(ROW_GROUP_BYTES, self.layout.target_file_size):
            self._flush(open_file)
            if open_file.stream.tell() >= self.layout.target_file_size:
                self._finish(values)

    def _start(self, values: tuple) -> _OpenFile:
        partition_values = {c: serialize(v) for c, v in zip(self.layout.partition_by, values)}
        directory = "/".join(directory_name(c, v) for c, v in partition_values.items())
        name = f"{self._prefix}-{uuid.uuid4()}.c000.{COMPRESSION}.parquet"
        relative = f"{directory}/{name}" if directory else name
        full = f"{self._root}/{relative}"
        self._fs.create_dir(full.rpartition("/")[0], recursive=True)  # a no-op on object stores
        stream = self._fs.open_output_stream(full)
        writer = pq.ParquetWriter(stream, self._data_schema, compression=COMPRESSION)
        return _OpenFile(relative, partition_values, stream, writer)

    def _flush(self, open_file: _OpenFile) -> None:
        if open_file.pending:
            open_file.writer.write_table(pa.Table.from_batches(open_file.pending, schema=self._data_schema))
            open_file.pending.clear()
            open_file.pending_bytes = 0

    def _finish(self, values: tuple) -> None:
        open_file = self._open.pop(values)
        self._flush(open_file)
        open_file.writer.close()
        size = open_file.stream.tell()
        open_file.stream.close()
        self._done.append(DataFile(
            path=open_file.relative_path,
            size=size,
            partition_values=open_file.partition_values,
            modification_time=int(self._clock() * 1000),
            stats=open_file.stats.to_json(),
            num_records=open_file.stats.num_records,
        ))
