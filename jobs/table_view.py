"""Keep a Delta table of the latest value per key of a compacted topic.

::

    spark-submit jobs/table_view.py --topic customers --table /data/tables/customers \\
        --bootstrap-server 127.0.0.1:9092 [--json-schema 'name STRING, tier STRING'] [--max-offsets-per-commit N]
    spate jobs run table-view --topic customers --table /data/tables/customers ...   (the same, through spate)

Each run reads the records the table has not applied yet, with the ``spate``
Spark source (committed records only), keeps the latest record of each key
and MERGEs them into the table: a record with a value upserts its key, a
tombstone (null value) deletes it; records without a key are skipped. The
next offset of every partition is stored in the table itself, in the same
commit as the rows (:mod:`spark_ext.delta.view_offsets`), so a run killed at
any point and run again applies every record exactly once. Schedule it (the
platform recipes, cron) to keep the table fresh; every run is one or more
Delta versions, which time travel reads back:
``deltalake.DeltaTable(path, version=N)``.

The table's columns: ``key`` (the record key as text), the value (``value``
as text, as bytes with ``--value-format binary``, or the fields decoded from
its JSON with ``--json-schema``), and the ``partition``, ``offset`` and
``timestamp`` of the record that set it. A key is expected to live in one
partition (the default partitioner keeps it there); should it appear in
several, the record of highest offset in one run wins.

Exit codes: 0 done, 1 failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from jobs.job_logging import configure_job_logging
from spark_ext import SpateDataSource
from spark_ext.delta.schema import DeltaSchemaError
from spark_ext.delta.view_offsets import OffsetRange, plan_slices, spark_offsets_json
from spark_ext.delta.view_table import KEY_COLUMN, TOMBSTONE_COLUMN, ApplyResult, StaleOffsetsError, ViewTable
from spate.client import EARLIEST, LATEST, Admin, TopicPartition
from spate.job_progress import ProgressWriter

PROGRESS_STEP = "offsets applied"
logger = logging.getLogger("spate.jobs.table_view")

BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"
RECORD_COLUMNS = ("partition", "offset", "timestamp")
VALUE_FORMATS = ("string", "binary")
MAX_ATTEMPTS = 5  # runs planned afresh after a concurrent commit


class TableViewError(ValueError):
    """A view the job cannot build as asked (its message names the argument)."""


@dataclass(frozen=True)
class TableViewConfig:
    topic: str
    table: str
    bootstrap_servers: str
    value_format: str = "string"
    json_schema: str | None = None
    max_offsets_per_commit: int | None = None
    storage_options: dict[str, str] = field(default_factory=dict)


@dataclass
class RunSummary:
    commits: list[ApplyResult] = field(default_factory=list)
    next_offsets: dict[int, int] = field(default_factory=dict)
    attempts: int = 0

    def line(self, config: TableViewConfig) -> str:
        if not self.commits:
            return f"table view {config.table} of {config.topic}: up to date at offsets {self.next_offsets}"
        versions = f"{self.commits[0].table_version}..{self.commits[-1].table_version}"
        return (f"table view {config.table} of {config.topic}: {len(self.commits)} commit(s) (versions {versions}), "
                f"{sum(c.upserted for c in self.commits)} upsert(s), {sum(c.deleted for c in self.commits)} "
                f"row(s) deleted; next offsets {self.next_offsets}")


def positions(config: TableViewConfig, view: ViewTable) -> tuple[dict[int, int], dict[int, int]]:
    """(where each partition starts: the stored offset or the log start; its last stable offset)."""
    with Admin(config.bootstrap_servers) as admin:
        described = admin.describe_topics([config.topic])[config.topic]
        partitions = [TopicPartition(config.topic, p.partition) for p in described.partitions]
        earliest = admin.list_offsets({tp: EARLIEST for tp in partitions}, isolation_level="read_committed")
        latest = admin.list_offsets({tp: LATEST for tp in partitions}, isolation_level="read_committed")
    stored = view.stored_offsets([tp.partition for tp in partitions])
    starts, ends = {}, {}
    for tp in partitions:
        log_start, end = earliest[tp].offset, latest[tp].offset
        start = stored.get(tp.partition, log_start)
        if start < log_start:
            logger.warning("partition %d of %s: records %d..%d were deleted before the view read them",
                           tp.partition, config.topic, start, log_start - 1)
            start = log_start
        starts[tp.partition], ends[tp.partition] = start, max(end, start)
    return starts, ends


def value_columns(config: TableViewConfig, frame: DataFrame) -> list:
    if config.json_schema is not None:
        decoded = frame.select(F.from_json(F.col("value").cast("string"), config.json_schema).alias("v"))
        names = decoded.select("v.*").columns
        clash = sorted(set(names) & {KEY_COLUMN, *RECORD_COLUMNS, TOMBSTONE_COLUMN})
        if clash:
            raise TableViewError(f"--json-schema: field(s) {', '.join(clash)} clash with the view's own columns")
        parsed = F.from_json(F.col("value").cast("string"), config.json_schema)
        return [parsed.getField(name).alias(name) for name in names]
    if config.value_format == "binary":
        return [F.col("value")]
    return [F.col("value").cast("string").alias("value")]


def read_changes(spark: SparkSession, config: TableViewConfig, ranges: Sequence[OffsetRange]):
    """The latest record of each key in ``ranges``, as Arrow (the view's columns plus the tombstone flag)."""
    partitions = [r.partition for r in ranges]
    frame = (
        spark.read.format("spate")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option("assign", f'{{"{config.topic}": {partitions}}}')
        .option("startingOffsets", spark_offsets_json(config.topic, {r.partition: r.start for r in ranges}))
        .option("endingOffsets", spark_offsets_json(config.topic, {r.partition: r.end for r in ranges}))
        .option("isolation.level", "read_committed")
        .load()
        .where(F.col("key").isNotNull())
    )
    rows = frame.select(F.col("key").cast("string").alias(KEY_COLUMN), *value_columns(config, frame),
                        *RECORD_COLUMNS, F.col("value").isNull().alias(TOMBSTONE_COLUMN))
    latest = Window.partitionBy(KEY_COLUMN).orderBy(F.col("offset").desc(), F.col("partition").desc())
    return rows.withColumn("_rank", F.row_number().over(latest)).where("_rank = 1").drop("_rank").toArrow()


def run(spark: SparkSession, config: TableViewConfig, *,
        fault: Callable[[str, Sequence[OffsetRange]], None] = lambda point, ranges: None) -> RunSummary:
    """Apply every record up to the topic's current end; ``fault`` lets tests fail at a named point."""
    from deltalake.exceptions import CommitFailedError

    spark.dataSource.register(SpateDataSource)
    view = ViewTable(config.table, config.topic, config.storage_options)
    summary = RunSummary()
    progress = ProgressWriter.from_environment()
    while summary.attempts < MAX_ATTEMPTS:
        summary.attempts += 1
        starts, ends = positions(config, view)
        summary.next_offsets = dict(starts)
        total = sum(end - starts[partition] for partition, end in ends.items())
        try:
            for ranges in plan_slices(starts, ends, config.max_offsets_per_commit):
                changes = read_changes(spark, config, ranges)
                fault("before-commit", ranges)
                summary.commits.append(view.apply(changes, ranges))
                summary.next_offsets.update({r.partition: r.end for r in ranges})
                progress.update(PROGRESS_STEP, sum(o - starts[p] for p, o in summary.next_offsets.items()), total)
                fault("after-commit", ranges)
            return summary
        except (StaleOffsetsError, CommitFailedError) as exc:
            logger.warning("a concurrent commit changed the table (%s); planning again from its stored offsets",
                           str(exc).splitlines()[0])
    raise RuntimeError(f"gave up after {MAX_ATTEMPTS} attempts: the table keeps changing under this run")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/table_view.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--topic", required=True, help="the compacted topic")
    parser.add_argument("--table", required=True, help="the Delta table: a path or a URI (s3://, gs://, abfs://...)")
    parser.add_argument("--bootstrap-server", default=os.environ.get(BOOTSTRAP_ENV) or "127.0.0.1:9092",
                        help=f"broker(s), host:port[,host:port] (default: ${BOOTSTRAP_ENV} or 127.0.0.1:9092)")
    values = parser.add_mutually_exclusive_group()
    values.add_argument("--value-format", choices=VALUE_FORMATS, default="string",
                        help="the value column as text (default) or as bytes")
    values.add_argument("--json-schema", help="decode values as JSON of this schema into columns "
                        "(Spark DDL: 'name STRING, tier STRING')")
    parser.add_argument("--max-offsets-per-commit", type=int,
                        help="apply at most this many offsets of each partition per Delta commit (default: all)")
    return parser


def config_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> TableViewConfig:
    if args.max_offsets_per_commit is not None and args.max_offsets_per_commit <= 0:
        parser.error("--max-offsets-per-commit must be positive")
    table = args.table.removeprefix("file://")
    return TableViewConfig(
        topic=args.topic, table=table if "://" in table else os.path.abspath(table),
        bootstrap_servers=args.bootstrap_server, value_format=args.value_format, json_schema=args.json_schema,
        max_offsets_per_commit=args.max_offsets_per_commit,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    config = config_from(parser.parse_args(argv), parser)
    configure_job_logging()
    spark = SparkSession.builder.appName(f"spate-table-view-{config.topic}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        summary = run(spark, config)
    except (TableViewError, DeltaSchemaError) as exc:
        logger.error("%s", exc)
        return 2
    except Exception as exc:  # noqa: BLE001 - reported as the job's failure
        logger.error("the table view job failed: %s", str(exc).splitlines()[0] if str(exc) else exc)
        return 1
    print(summary.line(config), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
