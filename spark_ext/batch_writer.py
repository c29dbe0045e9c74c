"""The batch sink: ``df.write.format("spate").mode("append")``.

``at_least_once`` (the default): each task sends its rows with an
idempotent producer and flushes; a retried task may write its rows again.

``exactly_once``: the whole job is one atomic write. Each task writes inside
a transaction with the id ``<prefix>-<job id>-<partition>`` (prefix:
``transactionalIdPrefix``, default ``spate-batch``; the job id is made when
the write is planned) and leaves it open; the driver commits them all once
every task succeeded, or aborts them. A retried task fences its earlier
attempt, so read_committed consumers see each row once, and nothing of a
failed job.
"""

from __future__ import annotations

import logging
import uuid
from functools import partial
from typing import Callable, Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from spark_ext.client_pool import shared_pool
from spark_ext.sink_commit import abort_transactions, commit_transactions, summarize
from spark_ext.sink_options import SinkOptions
from spark_ext.sink_records import records_of
from spark_ext.sink_schema import SinkColumns
from spark_ext.sink_task import SinkCommitMessage, TaskInfo, TaskWriter, spark_task_info
from spate.client import Admin, Producer, TransactionCompleter

logger = logging.getLogger(__name__)

DEFAULT_BATCH_PREFIX = "spate-batch"


class SpateBatchWriter(DataSourceArrowWriter):
    """Picklable; the same instance reaches the executors and the driver's commit."""

    def __init__(
        self,
        options: SinkOptions,
        columns: SinkColumns,
        *,
        job_id: str | None = None,
        task_info: Callable[[], TaskInfo] = spark_task_info,
        producer_factory: Callable[..., Producer] = Producer,
        admin_factory: Callable[..., Admin] = Admin,
        completer_factory: Callable[[str], TransactionCompleter] | None = None,
    ) -> None:
        self.options = options
        self.columns = columns
        self.job_id = job_id or uuid.uuid4().hex[:16]
        self._task_info = task_info
        self._producer_factory = producer_factory
        self._admin_factory = admin_factory
        # The driver's clients connect as the tasks' producers do: same listener security (SASL, TLS).
        self._completer_factory = completer_factory or partial(TransactionCompleter, **options.admin_settings())

    def transactional_id(self, partition: int) -> str:
        prefix = self.options.transactional_id_prefix or DEFAULT_BATCH_PREFIX
        return f"{prefix}-{self.job_id}-{partition}"

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        info = self._task_info()
        records = records_of(iterator, self.columns, self.options.topic)
        task = TaskWriter(self.options, self._producer_factory, self._admin_factory, shared_pool())
        if self.options.exactly_once:
            return task.write_transactional(records, info, self.transactional_id(info.partition), None)
        return task.write_at_least_once(records, info)

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        committed = 0
        if self.options.exactly_once:
            committed = commit_transactions(
                self.options.bootstrap_servers,
                messages,
                batch_id=None,
                timeout_ms=self.options.commit_timeout_ms,
                completer_factory=self._completer_factory,
                parallelism=self.options.commit_parallelism,
                pool=shared_pool(),
            )
        rows, _ = summarize(messages)
        logger.info("batch write %s: %d row(s), %d transaction(s) committed", self.job_id, rows, committed)

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        if self.options.exactly_once:
            abort_transactions(
                self.options.bootstrap_servers,
                messages,
                batch_id=None,
                timeout_ms=self.options.commit_timeout_ms,
                completer_factory=self._completer_factory,
                parallelism=self.options.commit_parallelism,
                pool=shared_pool(),
            )
