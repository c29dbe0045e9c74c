"""Batch reads: ``spark.read.format("spate")``.

The driver resolves the partitions and the starting and ending offsets once
(``startingOffsets`` defaults to earliest, ``endingOffsets`` to latest) and
plans one input partition per offset range, split further for
``minPartitions`` / ``maxRecordsPerPartition``, small ranges sharing one for
``minRecordsPerPartition``. Each task then reads its range (or ranges) with
:func:`~spark_ext.partition_reader.read_range`, with a consumer its Python
worker kept from an earlier task of the partition when there is one
(:mod:`spark_ext.consumer_cache`).
"""

from __future__ import annotations

from contextlib import closing
from typing import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from spark_ext.archive_reader import ArchiveOffsetReader, ArchiveRangePartition, archive_partitions, read_archive_range
from spark_ext.consumer_cache import WORKER_CACHE
from spark_ext.data_loss import DataLossPolicy
from spark_ext.offset_ranges import OffsetRange, coalesce_ranges, split_ranges
from spark_ext.offset_reader import OffsetReader
from spark_ext.options import SourceOptionError, SourceOptions
from spark_ext.partition_reader import ReadSettings, read_range
from spark_ext.query_metrics import MetricsTarget, ensure_served
from spark_ext.read_report import reporting
from spate.client import TopicPartition


class OffsetRangePartition(InputPartition):
    """One task's work: an offset range of one partition."""

    def __init__(self, offset_range: OffsetRange, metrics: MetricsTarget | None = None) -> None:
        self.offset_range = offset_range
        # Where the task reports what it read (metricsPort); None without metrics.
        self.metrics = metrics


class OffsetRangesPartition(InputPartition):
    """One task's work: several short offset ranges, read one after another."""

    def __init__(self, parts: list[OffsetRangePartition]) -> None:
        self.parts = parts


class SpateBatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.settings = ReadSettings.from_options(options)

    def partitions(self) -> list[InputPartition]:
        with closing(offset_reader_for(self.options)) as offsets:
            ranges = plan_batch_ranges(offsets, self.options)
            return input_partitions(ranges, self.options, offsets)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self.settings)


def offset_reader_for(options: SourceOptions) -> OffsetReader:
    """The driver's offset reader: one that reaches into the topics' archives with option archive."""
    return OffsetReader(options) if options.archive is None else ArchiveOffsetReader(options)


def input_partitions(ranges: list[OffsetRange], options: SourceOptions,
                     offsets: OffsetReader | None = None) -> list[InputPartition]:
    """Spark's input partitions for ``ranges``, split as minPartitions and maxRecordsPerPartition ask,
    short ones packed together for minRecordsPerPartition (and, reading archives, cut where each
    partition's archive ends, never packed). Asked for ``minPartitions``, nothing is packed."""
    pieces = split_ranges(
        ranges,
        min_partitions=options.min_partitions,
        max_records_per_partition=options.max_records_per_partition,
    )
    metrics = None
    if options.metrics is not None:
        metrics = options.metrics.target(options.group_id or options.strategy.describe())
        # Planning runs in the source's driver process: serve the endpoint from there unless it is served.
        ensure_served(metrics.host, metrics.port)
    if isinstance(offsets, ArchiveOffsetReader):
        return archive_partitions(pieces, offsets, lambda r: OffsetRangePartition(r, metrics))
    # A range of one offset or more is never packed with another: minPartitions keeps every piece apart.
    min_records = 1 if options.min_partitions is not None else options.min_records_per_partition
    groups = coalesce_ranges(pieces, min_records=min_records, max_records=options.max_records_per_partition)
    return [OffsetRangePartition(g[0], metrics) if len(g) == 1
            else OffsetRangesPartition([OffsetRangePartition(r, metrics) for r in g]) for g in groups]


def read_partition(partition: InputPartition, settings: ReadSettings) -> Iterator[pa.RecordBatch]:
    if isinstance(partition, ArchiveRangePartition):
        return read_archive_range(partition, settings.include_headers, settings.max_rows_per_batch)
    if isinstance(partition, OffsetRangesPartition):
        return (batch for part in partition.parts for batch in read_partition(part, settings))
    # Spark plans one placeholder partition when there is nothing to read.
    if not isinstance(partition, OffsetRangePartition):
        return iter(())
    batches = read_range(partition.offset_range, settings, cache=WORKER_CACHE)
    target = getattr(partition, "metrics", None)
    if target is None:
        return batches
    return reporting(batches, target, partition.offset_range.topic, partition.offset_range.partition)


def plan_batch_ranges(offsets: OffsetReader, options: SourceOptions) -> list[OffsetRange]:
    """The non-empty offset range of every partition the batch read covers."""
    if options.ending is None:
        raise ValueError("a batch read needs an ending offset spec")
    tps = offsets.partitions()
    if not tps:
        return []
    starts = offsets.resolve(options.starting, tps)
    ends = offsets.resolve(options.ending, tps, ending=True)
    earliest = offsets.earliest(tps)
    policy = DataLossPolicy(options.fail_on_data_loss)
    ranges = []
    for tp in sorted(tps):
        start, end = starts[tp], ends[tp]
        if start > end:
            raise SourceOptionError(
                "startingOffsets", f"{tp} would start at offset {start}, after its ending offset {end}"
            )
        start = policy.resolve_start(tp, start, earliest.get(tp, start))
        if end > start:
            ranges.append(_range(tp, start, end))
    return ranges


def _range(tp: TopicPartition, start: int, end: int) -> OffsetRange:
    return OffsetRange(tp.topic, tp.partition, start, end)
