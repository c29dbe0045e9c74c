"""A topic's Delta archive: its row layout, and how far each partition of it reaches.

The archive job (``jobs/archive.py``) writes, and the archive-spanning
source (:mod:`spark_ext.archive_reader`) reads, one Delta table per topic:

* rows have the Spark Kafka schema the ingest job writes (key, value, topic,
  partition, offset, timestamp, timestampType, headers) plus ``date``, the
  UTC day of the record's timestamp, which partitions the table so that a
  time-range read opens only its days;
* only committed records are there: aborted transactional records and
  control records never are, so offsets may have gaps where the log had them;
* each partition's offsets are copied in contiguous ranges, each committed
  with the Delta app transaction ``(spate-archive:<topic>:<partition>, end
  offset)``: the app version of a partition is where its archive ends, and a
  range whose end is committed already is never written twice.
"""

from __future__ import annotations

from typing import Mapping

from spark_ext.delta.table import DeltaLog

DATE_COLUMN = "date"
APP_ID_PREFIX = "spate-archive"


def archive_app_id(topic: str, partition: int) -> str:
    """The Delta app transaction id under which ``topic``'s ``partition`` is archived."""
    return f"{APP_ID_PREFIX}:{topic}:{partition}"


def archived_until(log: DeltaLog, topic: str, partitions: list[int]) -> dict[int, int]:
    """Where each partition's archive ends (offsets below are in the table); never archived ones are absent."""
    table = log.table()
    if table is None:
        return {}
    ends = {}
    for partition in partitions:
        version = table.transaction_version(archive_app_id(topic, partition))
        if version is not None:
            ends[partition] = version
    return ends


def archive_starts(table_uri: str, topic: str, storage_options: Mapping[str, str] | None = None) -> dict[int, int]:
    """The first archived offset of each partition of ``topic`` (reads the two offset columns only)."""

    table = DeltaLog(table_uri, storage_options).table()
    if table is None:
        return {}
    columns = table.to_pyarrow_dataset().to_table(columns=["topic", "partition", "offset"])
    columns = of_topic(columns, topic)
    if columns.num_rows == 0:
        return {}
    grouped = columns.group_by("partition").aggregate([("offset", "min")])
    return dict(zip(grouped.column("partition").to_pylist(), grouped.column("offset_min").to_pylist()))


def of_topic(rows, topic: str):
    """The rows of ``topic``, filtered after the scan: deltalake's dataset scans skip a file whose string column
    has no min/max statistics (as for strings over 32 characters) when filtered on that column."""
    import pyarrow.compute as pc

    return rows.filter(pc.equal(rows.column("topic"), topic))
