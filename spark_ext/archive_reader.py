"""Reading a topic across its Delta archive and its log: ``option("archive", "true")``.

::

    df = (spark.read.format("spate")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "orders")
          .option("archive", "true")          # archivePath: the table, else the topic's spate.archive.path
          .load())

With the option, a partition's earliest offset is the first one ever
archived (or the log start, whichever is lower), so ``startingOffsets
earliest`` means the first record ever written, in batch and streaming
reads alike. Planning then cuts every offset range at where the
partition's archive ends (its app transaction version, see
:mod:`spark_ext.archive_table`): offsets below are read from the Delta
table by :func:`read_archive_range`, the rest from the brokers as always.
Cutting at the archive's end rather than at the log start keeps the broker
side clear of what retention may delete (it deletes only archived offsets),
unless an archive run and retention both pass a planned range before it is
read; ``failOnDataLoss`` reports that, and a replanned read takes the range
from the archive. Every offset is read from exactly one side.

The archive holds committed records only (what a ``read_committed`` reader
sees); its rows come back in the source's schema, in offset order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import InputPartition

from spark_ext.archive_table import archive_starts, archived_until, of_topic
from spark_ext.arrow_batches import arrow_schema
from spark_ext.delta.table import DeltaLog
from spark_ext.offset_ranges import OffsetRange
from spark_ext.offset_reader import OffsetReader
from spark_ext.options import SourceOptionError
from spate.client import ConfigResource, TopicPartition

ARCHIVE_PATH_CONFIG = "spate.archive.path"


@dataclass(frozen=True)
class ArchiveRangePartition(InputPartition):
    """One task's work: offsets of one partition that are read from the topic's Delta archive."""

    offset_range: OffsetRange
    table_uri: str


class ArchiveOffsetReader(OffsetReader):
    """An offset reader whose earliest offsets reach back into each topic's archive."""

    def archive_path(self, topic: str) -> str:
        archive = self.options.archive
        if archive is not None and archive.path is not None:
            return archive.path
        entries = self.admin.describe_configs(ConfigResource.topic(topic)).get(ConfigResource.topic(topic), {})
        entry = entries.get(ARCHIVE_PATH_CONFIG)
        path = None if entry is None else entry.value
        if not path:
            raise SourceOptionError("archive", f"topic {topic!r} sets no {ARCHIVE_PATH_CONFIG}; set it or pass "
                                    "option archivePath")
        return path

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        wanted = list(tps)
        found = super().earliest(wanted)
        for topic in {tp.topic for tp in wanted}:
            starts = archive_starts(self.archive_path(topic), topic)
            for tp in wanted:
                if tp.topic == topic and tp.partition in starts and tp in found:
                    found[tp] = min(found[tp], starts[tp.partition])
        return found

    def archive_ends(self, tps: Iterable[TopicPartition]) -> tuple[dict[TopicPartition, int], dict[str, str]]:
        """Where each partition's archive ends, and each topic's table."""
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        ends: dict[TopicPartition, int] = {}
        tables = {}
        for topic, partitions in by_topic.items():
            tables[topic] = self.archive_path(topic)
            for partition, end in archived_until(DeltaLog(tables[topic]), topic, partitions).items():
                ends[TopicPartition(topic, partition)] = end
        return ends, tables


def archive_partitions(
    ranges: list[OffsetRange], offsets: ArchiveOffsetReader, log_partition: Callable[[OffsetRange], InputPartition]
) -> list[InputPartition]:
    """``ranges`` cut where each partition's archive ends: archive pieces first, then log pieces."""
    ends, tables = offsets.archive_ends({r.topic_partition for r in ranges})
    planned: list[InputPartition] = []
    for piece in ranges:
        archived, live = split_at(piece, ends.get(piece.topic_partition))
        if archived is not None:
            planned.append(ArchiveRangePartition(archived, tables[piece.topic]))
        if live is not None:
            planned.append(log_partition(live))
    return planned


def split_at(piece: OffsetRange, archive_end: int | None) -> tuple[OffsetRange | None, OffsetRange | None]:
    """The part of ``piece`` below ``archive_end`` and the part at or above it (None where empty)."""
    if archive_end is None or archive_end <= piece.from_offset:
        return None, piece
    if archive_end >= piece.until_offset:
        return piece, None
    return (OffsetRange(piece.topic, piece.partition, piece.from_offset, archive_end),
            OffsetRange(piece.topic, piece.partition, archive_end, piece.until_offset))


def read_archive_range(partition: ArchiveRangePartition, include_headers: bool,
                       max_rows: int = 65_536) -> Iterator[pa.RecordBatch]:
    """The archived records of the partition's range, in offset order, in the source's arrow schema."""
    from deltalake import DeltaTable

    r = partition.offset_range
    dataset = DeltaTable(partition.table_uri).to_pyarrow_dataset()
    condition = ((pc.field("partition") == r.partition) & (pc.field("offset") >= r.from_offset)
                 & (pc.field("offset") < r.until_offset))
    target = arrow_schema(include_headers)
    table = of_topic(dataset.to_table(columns=target.names, filter=condition), r.topic).sort_by("offset")
    table = table.cast(target)
    for batch in table.to_batches(max_chunksize=max_rows):
        if batch.num_rows:
            yield batch

