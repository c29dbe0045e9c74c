"""Small-file compaction of a Delta table (Delta's OPTIMIZE), committed by the project itself.

Streaming writes leave many small files (one per task and micro-batch).
:func:`compact` bin-packs the files smaller than a target size, partition by
partition (:mod:`.compaction_plan`), rewrites each bin as files of about
that size (:mod:`.parquet_files`, zstd, with statistics) and commits the swap
— ``remove`` of the small files, ``add`` of the new ones — as ONE commit
whose actions all say ``dataChange: false``: the content is unchanged, and a
streaming reader of the table skips the commit.

Safe beside writers: the commit is optimistic. A concurrent append (the
ingest sink) does not conflict, and the compaction lands on top of it. A
concurrent rewrite — another compaction, a table view's MERGE — carries the
same guard app transaction (:mod:`.rewrite_guard`), so the later of the two
fails with ``CommitFailedError`` without changing the table; :func:`compact`
then plans again from the new version, up to ``max_attempts`` times.
(``deltalake``'s own ``optimize.compact()`` would let two concurrent
compactions both land, each adding the same rows once more.) Files written by
an attempt that did not commit are never referenced; vacuum removes them.

Files with deletion vectors are left as they are.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, replace
from typing import Callable, Mapping
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from spark_ext.delta.compaction_plan import Bin, TableFile, plan_bins
from spark_ext.delta.parquet_files import DataFile, FileLayout, ParquetFilesWriter
from spark_ext.delta.partition_values import serialize
from spark_ext.delta.rewrite_guard import guard_transaction
from spark_ext.delta.schema import table_arrow_schema

logger = logging.getLogger(__name__)

DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024
DEFAULT_MAX_ATTEMPTS = 5
OPERATION_METADATA = "spate.operation"
MARKER_METADATA = "spate.compaction.id"


class CompactionConflictError(RuntimeError):
    """Every attempt met a conflicting concurrent rewrite."""


@dataclass(frozen=True)
class FilesSummary:
    files: int
    bytes: int


@dataclass(frozen=True)
class CompactionResult:
    before: FilesSummary
    after: FilesSummary
    files_removed: int
    files_added: int
    table_version: int | None  # the compaction's commit; None when there was nothing to compact
    attempts: int

    @property
    def committed(self) -> bool:
        return self.table_version is not None


def table_files(table) -> list[TableFile]:
    """The files of ``table``'s current version (those with deletion vectors left out)."""
    actions = pa.table(table.get_add_actions(flatten=False))
    files = []
    for row in actions.to_pylist():
        if row.get("deletionVector"):
            continue
        values = {k: serialize(v) for k, v in (row.get("partition") or {}).items()}
        files.append(TableFile(unquote(row["path"]), row["size_bytes"], values, row["modification_time"]))
    return files


def files_summary(files: list[TableFile]) -> FilesSummary:
    return FilesSummary(len(files), sum(f.size for f in files))


def compact(table_uri: str, target_size: int = DEFAULT_TARGET_FILE_SIZE, *,
            storage_options: Mapping[str, str] | None = None, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
            load: Callable[[], object] | None = None, clock: Callable[[], float] = time.time) -> CompactionResult:
    """Bin-pack the table's small files into files of about ``target_size`` bytes; one commit, dataChange=false.

    ``load`` returns the table to plan from (tests hand in a stale one); by default the latest version.
    """
    from deltalake import DeltaTable
    from deltalake.exceptions import CommitFailedError

    def latest():
        return DeltaTable(table_uri, storage_options=dict(storage_options or {}) or None)

    planner = load or latest
    for attempt in range(1, max_attempts + 1):
        table = planner()
        files = table_files(table)
        bins = plan_bins(files, target_size)
        if not bins:
            return CompactionResult(files_summary(files), files_summary(files), 0, 0, None, attempt)
        try:
            version, added = _rewrite_and_commit(table, table_uri, bins, target_size, clock)
        except CommitFailedError as exc:
            logger.warning("compaction of %s (attempt %d of %d) met a concurrent rewrite: %s", table_uri, attempt,
                           max_attempts, str(exc).splitlines()[0])
            planner = latest
            continue
        removed = sum(len(b.files) for b in bins)
        logger.info("compaction of %s: %d file(s) into %d, version %d", table_uri, removed, added, version)
        return CompactionResult(files_summary(files), files_summary(table_files(latest())), removed, added, version,
                                attempt)
    raise CompactionConflictError(f"compaction of {table_uri}: {max_attempts} attempts all met concurrent "
                                  "rewrites; run it again when the table is quieter")


def _rewrite_and_commit(table, table_uri: str, bins: list[Bin], target_size: int,
                        clock: Callable[[], float]) -> tuple[int, int]:
    """Write each bin's rows as new files and commit the swap; (the commit's version, files added)."""
    from deltalake.transaction import CommitProperties

    read_version = table.version()
    schema = pa.schema(table.schema().to_arrow())
    partition_by = list(table.metadata().partition_columns)
    data_schema = table_arrow_schema(pa.schema([f for f in schema if f.name not in partition_by]))
    filesystem, root = pafs.FileSystem.from_uri(table_uri)
    root = root.rstrip("/")
    now = int(clock() * 1000)
    marker = f"{read_version}-{uuid.uuid4().hex}"
    actions, added = [], 0
    for bin_ in bins:
        for written in _rewrite(filesystem, root, bin_, data_schema, target_size, clock):
            actions.append(_add_action(written))
            added += 1
        actions += [_remove_action(f, now) for f in bin_.files]
    properties = CommitProperties(
        app_transactions=[guard_transaction(read_version)],
        custom_metadata={OPERATION_METADATA: "compaction", "spate.compaction.targetSize": str(target_size),
                         MARKER_METADATA: marker},
    )
    table.create_write_transaction(actions, "append", schema, partition_by=partition_by,
                                   commit_properties=properties)
    return _commit_version(table_uri, read_version, marker), added


def _rewrite(filesystem: pafs.FileSystem, root: str, bin_: Bin, data_schema: pa.Schema, target_size: int,
             clock: Callable[[], float]) -> list[DataFile]:
    directory = bin_.files[0].directory
    layout = FileLayout(f"{root}/{directory}" if directory else root, data_schema, (), target_size)
    writer = ParquetFilesWriter(layout, "part-compacted", filesystem=filesystem, clock=clock)
    try:
        for file in bin_.files:
            with filesystem.open_input_file(f"{root}/{file.path}") as source:
                for batch in pq.ParquetFile(source).iter_batches():
                    writer.write(_conform(batch, data_schema))
        written = writer.close()
    except BaseException:
        writer.abort()
        raise
    prefix = f"{directory}/" if directory else ""
    return [replace(f, path=prefix + f.path, partition_values=dict(bin_.partition_values)) for f in written]


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` in the table's current columns: a column added since the file was written is null."""
    columns = [batch.column(f.name).cast(f.type) if f.name in batch.schema.names else pa.nulls(batch.num_rows, f.type)
               for f in schema]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _add_action(file: DataFile):
    from deltalake.transaction import AddAction

    return AddAction(file.path, file.size, dict(file.partition_values), file.modification_time, False, file.stats)


def _remove_action(file: TableFile, deletion_time_ms: int):
    from deltalake.transaction import RemoveAction

    return RemoveAction(file.path, False, deletion_time_ms, file.size, dict(file.partition_values))


def _commit_version(table_uri: str, read_version: int, marker: str) -> int:
    """The version of this compaction's commit, found by its marker in the table's recent history."""
    from deltalake import DeltaTable

    for _ in range(20):
        for entry in DeltaTable(table_uri).history(100):
            if entry["version"] > read_version and entry.get(MARKER_METADATA) == marker:
                return entry["version"]
        time.sleep(0.05)
    raise RuntimeError(f"compaction of {table_uri}: its commit (read version {read_version}) is not in the "
                       "table's history")
