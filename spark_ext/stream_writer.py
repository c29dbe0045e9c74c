"""The streaming sink: ``df.writeStream.format("spate")``.

Each micro-batch runs :meth:`SpateStreamWriter.write` once per Spark
partition on the executors (see :mod:`spark_ext.sink_task` for what a task
does) and then :meth:`commit` or :meth:`abort` once on the driver with the
tasks' messages and the batch id (see :mod:`spark_ext.sink_commit`). Spark
builds the writer anew for each micro-batch and for each commit, so
constructing it does no I/O. With ``sourceGroupId`` the driver's commit
first reads the batch's source offsets from the checkpoint's offset log
(:mod:`spark_ext.checkpoint_offsets`) and commits them with the batch.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import Callable, Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from spark_ext.client_pool import shared_pool
from spark_ext.query_metrics import report
from spark_ext.sink_bookkeeping import BatchBookkeeping
from spark_ext.sink_commit import (
    SourceOffsets,
    abort_transactions,
    batch_source_offsets,
    commit_transactions,
    summarize,
)
from spark_ext.sink_options import SinkOptions
from spark_ext.sink_records import records_of
from spark_ext.sink_schema import SinkColumns
from spark_ext.sink_task import SinkCommitMessage, TaskInfo, TaskWriter, spark_task_info
from spate.client import Admin, Producer, TransactionCompleter, TransactionOffsetsWriter

logger = logging.getLogger(__name__)


class SpateStreamWriter(DataSourceStreamArrowWriter):
    """Picklable; the factories and ``task_info`` exist so tests can run it without Spark."""

    def __init__(
        self,
        options: SinkOptions,
        columns: SinkColumns,
        *,
        task_info: Callable[[], TaskInfo] = spark_task_info,
        producer_factory: Callable[..., Producer] = Producer,
        admin_factory: Callable[..., Admin] = Admin,
        completer_factory: Callable[[str], TransactionCompleter] | None = None,
        offsets_writer_factory: Callable[[str], TransactionOffsetsWriter] | None = None,
    ) -> None:
        self.options = options
        self.columns = columns
        self._task_info = task_info
        self._producer_factory = producer_factory
        self._admin_factory = admin_factory
        # The driver's clients connect as the tasks' producers do: same listener security (SASL, TLS).
        self._completer_factory = completer_factory or partial(TransactionCompleter, **options.admin_settings())
        self._offsets_writer_factory = offsets_writer_factory or partial(TransactionOffsetsWriter,
                                                                         **options.admin_settings())

    @property
    def bookkeeping(self) -> BatchBookkeeping | None:
        prefix = self.options.transactional_id_prefix
        if not self.options.exactly_once or prefix is None:
            return None
        return BatchBookkeeping(sink_id=prefix, topic=self.options.bookkeeping_topic)

    # --- executors ----------------------------------------------------------------------------------

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        batches = iter(iterator)
        info = self._task_info()
        records = records_of(batches, self.columns, self.options.topic)
        task = TaskWriter(self.options, self._producer_factory, self._admin_factory, shared_pool())
        bookkeeping = self.bookkeeping
        if bookkeeping is None:
            message = task.write_at_least_once(records, info)
        else:
            transactional_id = bookkeeping.transactional_id(info.partition)
            message = task.write_transactional(records, info, transactional_id, bookkeeping)
        for _ in batches:  # rows of a batch already committed are not read; let Spark finish sending them
            pass
        return message

    # --- driver -------------------------------------------------------------------------------------

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        committed = 0
        started = time.perf_counter()
        if self.options.exactly_once:
            committed = commit_transactions(
                self.options.bootstrap_servers,
                messages,
                batch_id=batchId,
                timeout_ms=self.options.commit_timeout_ms,
                completer_factory=self._completer_factory,
                parallelism=self.options.commit_parallelism,
                pool=shared_pool(),
                source_offsets=self._source_offsets(batchId),
                offsets_writer_factory=self._offsets_writer_factory,
                offsets_producer_factory=self._offsets_producer,
            )
        elapsed_ms = (time.perf_counter() - started) * 1000 if self.options.exactly_once else None
        rows, skipped = summarize(messages)
        metrics = self.options.metrics
        if metrics is not None:
            topic = self.options.topic or ""
            report(metrics.target(topic), {"kind": "sink_commit", "topic": topic, "elapsed_ms": elapsed_ms,
                                           "rows": rows, "transactions": committed})
        logger.info("micro-batch %d: %d row(s) written, %d transaction(s) committed, %d task(s) found it "
                    "committed already", batchId, rows, committed, skipped)

    def _source_offsets(self, batch_id: int) -> SourceOffsets | None:
        group, checkpoint, sink_id = (
            self.options.source_group_id, self.options.checkpoint_dir, self.options.transactional_id_prefix
        )
        if group is None or checkpoint is None or sink_id is None:
            return None
        source = batch_source_offsets(group, checkpoint, batch_id, sink_id)
        if not source.offsets:
            logger.warning("micro-batch %d: sourceGroupId %r is set but the offset log names no spate source "
                           "offsets; the group is not moved", batch_id, group)
        return source

    def _offsets_producer(self, transactional_id: str) -> Producer:
        return self._producer_factory(
            self.options.bootstrap_servers,
            **self.options.producer_settings,
            transactional_id=transactional_id,
            transaction_timeout_ms=self.options.transaction_timeout_ms,
        )

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        if self.options.exactly_once:
            abort_transactions(
                self.options.bootstrap_servers,
                messages,
                batch_id=batchId,
                timeout_ms=self.options.commit_timeout_ms,
                completer_factory=self._completer_factory,
                parallelism=self.options.commit_parallelism,
                pool=shared_pool(),
            )
