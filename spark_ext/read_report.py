"""A source task's tally of what it read, reported to the query's metrics endpoint when the task ends."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from spark_ext.query_metrics import MetricsTarget, report


def batch_bytes(batch: pa.RecordBatch) -> int:
    """Key and value bytes of the records in ``batch`` (null counts as 0)."""
    total = 0
    for name in ("key", "value"):
        index = batch.schema.get_field_index(name)
        if index >= 0:
            total += pc.sum(pc.binary_length(batch.column(index))).as_py() or 0
    return total


def reporting(batches: Iterator[pa.RecordBatch], target: MetricsTarget, topic: str,
              partition: int) -> Iterator[pa.RecordBatch]:
    """Pass ``batches`` through, then report their records and bytes for ``topic``-``partition``."""
    records = size = 0
    for batch in batches:
        records += batch.num_rows
        size += batch_bytes(batch)
        yield batch
    report(target, {"kind": "read", "topic": topic, "partition": partition, "records": records, "bytes": size})
