"""The ``spate-delta`` writers: tasks write Parquet files, the driver commits them once.

Streaming (``df.writeStream.format("spate-delta")``): each micro-batch's
tasks write their files (:mod:`.parquet_files`) and report them; the driver's
``commit(messages, batchId)`` commits all of them in one Delta commit with
the app transaction ``(txnAppId or the query id, batchId)`` (:mod:`.table`).
A batch Spark replays after a crash finds its version committed and adds
nothing; the files its tasks wrote again are never referenced. A failed
batch (``abort``) leaves its files unreferenced too.

Batch (``df.write.format("spate-delta").mode("append")``): the same, with
one commit for the job, carrying ``(txnAppId, txnVersion)`` when both are set.
"""

from __future__ import annotations

import json
import logging
import os
import random
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage

from spark_ext.delta.options import DeltaSinkOptions
from spark_ext.delta.parquet_files import DataFile, FileLayout, ParquetFilesWriter
from spark_ext.delta.table import AppTransaction, CommitResult, DeltaLog
from spark_ext.sink_task import TaskInfo, spark_task_info

logger = logging.getLogger(__name__)


class InjectedTaskFailure(RuntimeError):
    """Raised by a task on purpose (``testFailTaskProbability``), after its files are written."""


class DeltaCommitError(RuntimeError):
    """The driver cannot commit a batch (e.g. it cannot tell which application the batch belongs to)."""


@dataclass(frozen=True)
class DeltaCommitMessage(WriterCommitMessage):
    """A task's files, and the query it ran for."""

    files: tuple[DataFile, ...]
    partition: int
    query_id: str | None


def write_task(options: DeltaSinkOptions, layout: FileLayout, batches: Iterator[pa.RecordBatch],
               info: TaskInfo, rng: Callable[[], float] = random.random) -> DeltaCommitMessage:
    writer = ParquetFilesWriter(layout, f"part-{info.partition:05d}")
    try:
        for batch in batches:
            writer.write(batch)
        files = writer.close()
    except BaseException:
        writer.abort()
        raise
    if options.test_fail_task_probability and info.attempt == 0 and rng() < options.test_fail_task_probability:
        raise InjectedTaskFailure(f"task {info.partition} of batch {info.batch_id} fails once on purpose "
                                  f"(testFailTaskProbability), leaving {len(files)} unreferenced file(s)")
    return DeltaCommitMessage(tuple(files), info.partition, info.query_id)


def files_of(messages: List[Optional[WriterCommitMessage]]) -> list[DataFile]:
    return [f for m in messages if isinstance(m, DeltaCommitMessage) for f in m.files]


class _TaskWriter:
    """What both writers' tasks do: write their rows as Parquet files into the table, reported to the driver."""

    def __init__(self, options: DeltaSinkOptions, layout: FileLayout,
                 task_info: Callable[[], TaskInfo] = spark_task_info) -> None:
        self.options = options
        self.layout = layout
        self._task_info = task_info

    def write(self, iterator: Iterator[pa.RecordBatch]) -> DeltaCommitMessage:
        return write_task(self.options, self.layout, iterator, self._task_info())


class DeltaStreamWriter(_TaskWriter, DataSourceStreamArrowWriter):
    """Picklable; Spark builds one per micro-batch on the driver and ships it to the tasks."""

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        app_id = self.options.txn_app_id or _query_id(messages) or checkpoint_query_id(
            self.options.checkpoint_location
        )
        if app_id is None:
            raise DeltaCommitError(
                f"micro-batch {batchId}: cannot tell which query it belongs to (no task reported a query id and "
                "no checkpointLocation option names one); set option('txnAppId', ...)"
            )
        result = _commit(self.options, self.layout, files_of(messages), AppTransaction(app_id, batchId))
        _log(f"micro-batch {batchId} ({app_id})", self.options.table_uri, result)

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        logger.warning("micro-batch %d failed: %d file(s) written to %s stay unreferenced until vacuum",
                       batchId, len(files_of(messages)), self.options.table_uri)


class DeltaBatchWriter(_TaskWriter, DataSourceArrowWriter):
    """Picklable; the same instance reaches the tasks and the driver's commit."""

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        txn = None
        if self.options.txn_app_id is not None and self.options.txn_version is not None:
            txn = AppTransaction(self.options.txn_app_id, self.options.txn_version)
        result = _commit(self.options, self.layout, files_of(messages), txn)
        _log("batch write", self.options.table_uri, result)

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        logger.warning("batch write failed: %d file(s) written to %s stay unreferenced until vacuum",
                       len(files_of(messages)), self.options.table_uri)


def _commit(options: DeltaSinkOptions, layout: FileLayout, files: list[DataFile],
            txn: AppTransaction | None) -> CommitResult:
    log = DeltaLog(options.table_uri, options.storage_options)
    return log.commit(files, layout.schema, layout.partition_by, app_transaction=txn,
                      merge_schema=options.merge_schema)


def _query_id(messages: List[Optional[WriterCommitMessage]]) -> str | None:
    ids = {m.query_id for m in messages if isinstance(m, DeltaCommitMessage) and m.query_id}
    if len(ids) > 1:
        raise DeltaCommitError(f"the batch's tasks report different query ids: {sorted(ids)}")
    return next(iter(ids), None)


def checkpoint_query_id(location: str | None) -> str | None:
    """The query id in ``<checkpointLocation>/metadata`` (Spark writes ``{"id": …}`` there), or None."""
    if not location:
        return None
    import pyarrow.fs as pafs

    try:
        filesystem, root = pafs.FileSystem.from_uri(location if "://" in location else os.path.abspath(location))
        with filesystem.open_input_stream(root.rstrip("/") + "/metadata") as stream:
            first_line = stream.read().decode("utf-8").splitlines()[0]
        return json.loads(first_line).get("id")
    except (OSError, ValueError, IndexError):
        return None


def _log(what: str, table_uri: str, result: CommitResult) -> None:
    if result.skipped:
        logger.info("%s: committed to %s already; %d file(s) just written stay unreferenced", what, table_uri,
                    result.files)
    else:
        logger.info("%s: %d row(s) in %d file(s) committed to %s as version %s%s", what, result.records,
                    result.files, table_uri, result.table_version, " (schema evolved)" if result.schema_evolved else "")
