"""Stream a topic into a Delta table, exactly once.

::

    spark-submit jobs/ingest.py --topic orders --table /data/tables/orders \\
        --bootstrap-server 127.0.0.1:9092 [--available-now | --trigger-interval 10s] [--checkpoint DIR]
    spate jobs run ingest --topic orders --table /data/tables/orders ...     (the same, through spate)

The table gets the Spark Kafka schema (key, value, topic, partition,
offset, timestamp, timestampType, headers), or with ``--json-schema`` the
record's coordinates (topic, partition, offset, timestamp, key as text)
followed by the fields decoded from its JSON value. Every micro-batch is one
Delta commit carrying the query's app transaction, so a query killed at any
point and restarted from its checkpoint writes each record once.
``--available-now`` ingests what the topic holds and exits; without it the
query runs until stopped. Stopping it anywhere (SIGTERM, Ctrl-C, even
SIGKILL) loses nothing and duplicates nothing: the next run resumes from
the checkpoint, and ``spate jobs run`` reports a streaming job it stopped on
SIGTERM as done.

Exit codes: 0 done, 1 the query failed, 2 bad arguments, 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from dataclasses import dataclass
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from jobs.job_logging import configure_job_logging
from jobs.query_progress import report_query_progress
from spark_ext import SpateDataSource
from spark_ext.delta.sink import SpateDeltaDataSource

logger = logging.getLogger("spate.jobs.ingest")

DEFAULT_CHECKPOINT_DIR = "_spate_ingest_checkpoint"
BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"  # the spate command's default broker too
_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, None: 1000}


@dataclass(frozen=True)
class IngestConfig:
    topic: str
    table: str
    bootstrap_servers: str
    checkpoint: str
    available_now: bool = False
    trigger_interval_ms: int = 10_000
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    json_schema: str | None = None
    partition_by: str | None = None
    merge_schema: bool = False
    target_file_size: str | None = None
    fail_task_probability: float | None = None  # fault tests only


def parse_interval_ms(text: str) -> int:
    """``10s``, ``500ms``, ``2m``, ``1h`` or plain seconds, as milliseconds."""
    match = _INTERVAL.match(text)
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"--trigger-interval must be a positive duration such as 10s, 500ms or 2m, not {text!r}")
    return int(float(match.group(1)) * _UNIT_MS[match.group(2)])


def default_checkpoint(table: str) -> str:
    """A query's checkpoint beside its data: ``<table>/_spate_ingest_checkpoint`` (Delta and vacuum skip ``_`` names)."""
    if "://" in table and not table.startswith("file://"):
        raise ValueError("--checkpoint is required when --table is a URI: Spark keeps the query's checkpoint there")
    return os.path.join(table.removeprefix("file://"), DEFAULT_CHECKPOINT_DIR)


def records(spark: SparkSession, config: IngestConfig) -> DataFrame:
    """The topic as the DataFrame the table receives."""
    reader = (
        spark.readStream.format("spate")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option("subscribe", config.topic)
        .option("startingOffsets", config.starting_offsets)
        .option("includeHeaders", "true")
    )
    if config.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(config.max_offsets_per_trigger))
    frame = reader.load()
    if config.json_schema is None:
        return frame
    decoded = F.from_json(F.col("value").cast("string"), config.json_schema).alias("decoded")
    return frame.select("topic", "partition", "offset", "timestamp", F.col("key").cast("string").alias("key"),
                        decoded).select("topic", "partition", "offset", "timestamp", "key", "decoded.*")


def start_query(spark: SparkSession, config: IngestConfig) -> StreamingQuery:
    spark.dataSource.register(SpateDataSource)
    spark.dataSource.register(SpateDeltaDataSource)
    writer = records(spark, config).writeStream.format("spate-delta").option("checkpointLocation", config.checkpoint)
    for name, value in (("partitionBy", config.partition_by), ("targetFileSize", config.target_file_size),
                        ("mergeSchema", "true" if config.merge_schema else None),
                        ("testFailTaskProbability", config.fail_task_probability)):
        if value is not None:
            writer = writer.option(name, str(value))
    writer = writer.queryName(f"ingest {config.topic}")
    if config.available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{config.trigger_interval_ms} milliseconds")
    return writer.start(config.table)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/ingest.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--topic", required=True, help="topic to ingest (a comma-separated list for several)")
    parser.add_argument("--table", required=True, help="the Delta table: a path or a URI (s3://, gs://, abfs://...)")
    parser.add_argument("--bootstrap-server", default=os.environ.get(BOOTSTRAP_ENV) or "127.0.0.1:9092",
                        help=f"broker(s), host:port[,host:port] (default: ${BOOTSTRAP_ENV} or 127.0.0.1:9092)")
    parser.add_argument("--checkpoint", help=f"the query's checkpoint (default: <table>/{DEFAULT_CHECKPOINT_DIR})")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--available-now", action="store_true", help="ingest what the topic holds, then exit")
    when.add_argument("--trigger-interval", default="10s", help="time between micro-batches (default 10s)")
    parser.add_argument("--starting-offsets", default="earliest", choices=("earliest", "latest"),
                        help="where a new query starts (a restarted one continues from its checkpoint)")
    parser.add_argument("--max-offsets-per-trigger", type=int, help="cap on records per micro-batch")
    parser.add_argument("--json-schema", help="decode values as JSON of this schema (Spark DDL: 'page STRING, ms LONG')")
    parser.add_argument("--partition-by", help="comma-separated partition columns of a new table")
    parser.add_argument("--merge-schema", action="store_true", help="add new columns of the data to the table")
    parser.add_argument("--target-file-size", help="bytes per Parquet file (e.g. 128m)")
    parser.add_argument("--fail-task-probability", type=float, help=argparse.SUPPRESS)  # fault tests
    return parser


def config_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> IngestConfig:
    try:
        interval_ms = parse_interval_ms(args.trigger_interval)
        checkpoint = args.checkpoint or default_checkpoint(args.table)
    except ValueError as exc:
        parser.error(str(exc))
    if args.max_offsets_per_trigger is not None and args.max_offsets_per_trigger <= 0:
        parser.error("--max-offsets-per-trigger must be positive")
    return IngestConfig(
        topic=args.topic, table=args.table, bootstrap_servers=args.bootstrap_server, checkpoint=checkpoint,
        available_now=args.available_now, trigger_interval_ms=interval_ms, starting_offsets=args.starting_offsets,
        max_offsets_per_trigger=args.max_offsets_per_trigger, json_schema=args.json_schema,
        partition_by=args.partition_by, merge_schema=args.merge_schema, target_file_size=args.target_file_size,
        fail_task_probability=args.fail_task_probability,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    config = config_from(parser.parse_args(argv), parser)
    configure_job_logging()
    spark = SparkSession.builder.appName(f"spate-ingest-{config.topic}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    logger.info("ingesting topic %s into %s (checkpoint %s, %s)", config.topic, config.table, config.checkpoint,
                "available now" if config.available_now else f"every {config.trigger_interval_ms} ms")
    report_query_progress(spark, "records ingested")
    query = start_query(spark, config)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        logger.info("interrupted; the next run resumes from the checkpoint")
        return 130
    except Exception as exc:  # noqa: BLE001 - reported as the job's failure, with Spark's message
        logger.error("the ingest query failed: %s", str(exc).splitlines()[0] if str(exc) else exc)
        return 1
    progress = query.lastProgress
    logger.info("ingest of %s into %s stopped (last micro-batch: %s)", config.topic, config.table,
                progress["batchId"] if progress else "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
