"""A streaming job's progress for ``spate jobs run``: micro-batches and records, as the query reports them.

Spark calls the listener on the driver after each micro-batch; it turns the
query's progress into :mod:`spate.job_progress` events. The totals are
unknown (a stream has no end), so the runner shows counts.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQueryListener

from spate.job_progress import ProgressWriter


class QueryProgressListener(StreamingQueryListener):
    def __init__(self, writer: ProgressWriter, records_step: str) -> None:
        self.writer = writer
        self.records_step = records_step
        self.records = 0

    def onQueryStarted(self, event) -> None:
        self.writer.update("micro-batches", 0)

    def onQueryProgress(self, event) -> None:
        progress = event.progress
        self.records += progress.numInputRows
        self.writer.update("micro-batches", progress.batchId + 1)
        self.writer.update(self.records_step, self.records)

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        pass


def report_query_progress(spark: SparkSession, records_step: str) -> QueryProgressListener | None:
    """Report every streaming query of this session to the runner, if a runner asked for progress."""
    writer = ProgressWriter.from_environment()
    if writer.path is None:
        return None
    listener = QueryProgressListener(writer, records_step)
    spark.streams.addListener(listener)
    return listener
