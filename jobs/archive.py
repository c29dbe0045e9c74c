"""Archive a topic into its Delta table before retention deletes it, exactly once.

::

    spark-submit jobs/archive.py --topic orders --bootstrap-server 127.0.0.1:9092 [--table URI] [--all]
    spate jobs run archive --topic orders ...                          (the same, through spate)

For a topic that sets ``spate.archive.path``, each run asks every
partition's leader where retention would move the log start
(``archive_target_offset``, never past the last stable offset), copies the
records from where the partition's archive ends up to there into the Delta
table, and then tells every replica the archived offset, which lets
retention delete those segments. ``--all`` copies up to the last stable
offset instead (everything committed so far). Records are read with
``read_committed``: aborted transactional records are never archived.

Exactly once: each partition's range is one Delta commit carrying the app
transaction ``(spate-archive:<topic>:<partition>, end offset)``; a run that
dies after the commit but before telling the brokers finds that version in
the table next time, writes nothing again and reports it. Schedule it more
often than ``retention.ms`` (see ``platform/cron`` and ``platform/systemd``);
a topic whose job stopped keeps its unarchived segments, and ``spate topics
describe`` shows the lag.

Exit codes: 0 done, 1 the archive or a broker refused, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.job_logging import configure_job_logging
from spark_ext import SpateDataSource
from spark_ext.archive_table import DATE_COLUMN, archive_app_id, archived_until
from spark_ext.delta.sink import SpateDeltaDataSource
from spark_ext.delta.table import DeltaLog
from spate.client import TopicPartition
from spate.client.admin.archive_offsets import ArchiveOffsetsClient, PartitionArchiveState
from spate.job_progress import ProgressWriter

logger = logging.getLogger("spate.jobs.archive")

BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"
PROGRESS_STEP = "partitions archived"


class ArchiveJobError(RuntimeError):
    """The topic cannot be archived as asked (no archive path, no leader, a refusal)."""


@dataclass(frozen=True)
class ArchiveConfig:
    topic: str
    bootstrap_servers: str
    table: str | None = None  # default: the topic's spate.archive.path
    up_to_stable: bool = False  # --all


@dataclass
class ArchiveSummary:
    table: str
    ranges: dict[int, tuple[int, int]] = field(default_factory=dict)  # partition -> [from, until) copied
    archived: dict[int, int] = field(default_factory=dict)  # partition -> archived offset told to the brokers
    seconds: float = 0.0

    @property
    def offsets_copied(self) -> int:
        return sum(until - start for start, until in self.ranges.values())


@dataclass(frozen=True)
class PartitionPlan:
    partition: int
    start: int
    until: int


def plan_ranges(states: dict[TopicPartition, PartitionArchiveState], archived: dict[int, int],
                up_to_stable: bool) -> list[PartitionPlan]:
    """The range each partition still needs: from its archive's end (or log start) to the target."""
    plans = []
    for tp, state in sorted(states.items()):
        done = archived.get(tp.partition)
        if done is not None and done > state.high_watermark:
            raise ArchiveJobError(f"the archive of {tp} reaches offset {done}, past its high watermark "
                                  f"{state.high_watermark}: the table belongs to an earlier topic of that name; "
                                  "give the topic a new spate.archive.path")
        start = state.log_start_offset if done is None else max(done, state.log_start_offset)
        if done is not None and done < state.log_start_offset:
            logger.warning("%s: offsets [%d, %d) were deleted before they were archived", tp, done,
                           state.log_start_offset)
        until = state.last_stable_offset if up_to_stable else state.archive_target_offset
        if until > start:
            plans.append(PartitionPlan(tp.partition, start, until))
    return plans


def archive_rows(spark: SparkSession, config: ArchiveConfig, plan: PartitionPlan) -> DataFrame:
    """The committed records of one partition's range, as archive rows."""
    assign = json.dumps({config.topic: [plan.partition]})
    frame = (
        spark.read.format("spate")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option("assign", assign)
        .option("startingOffsets", json.dumps({config.topic: {str(plan.partition): plan.start}}))
        .option("endingOffsets", json.dumps({config.topic: {str(plan.partition): plan.until}}))
        .option("includeHeaders", "true")
        .option("kafka.isolation.level", "read_committed")
        .load()
    )
    # The UTC day, whatever the session's time zone: whole days since the epoch of the timestamp's seconds.
    utc_day = F.expr("date_from_unix_date(CAST(floor(CAST(timestamp AS BIGINT) / 86400) AS INT))")
    return frame.withColumn(DATE_COLUMN, utc_day)


def run_archive(spark: SparkSession, config: ArchiveConfig) -> ArchiveSummary:
    spark.dataSource.register(SpateDataSource)
    spark.dataSource.register(SpateDeltaDataSource)
    began = time.monotonic()
    with ArchiveOffsetsClient(config.bootstrap_servers) as brokers:
        states = brokers.describe(brokers.partitions(config.topic))
        table = config.table or _archive_path(config.topic, states)
        log = DeltaLog(table)
        partitions = sorted(tp.partition for tp in states)
        summary = ArchiveSummary(table)
        plans = plan_ranges(states, archived_until(log, config.topic, partitions), config.up_to_stable)
        progress = ProgressWriter.from_environment()
        progress.update(PROGRESS_STEP, 0, len(plans))
        for done, plan in enumerate(plans, start=1):
            _copy(spark, config, table, plan)
            summary.ranges[plan.partition] = (plan.start, plan.until)
            progress.update(PROGRESS_STEP, done, len(plans))
        summary.archived = archived_until(log, config.topic, partitions)
        if summary.archived:
            outcome = brokers.record({TopicPartition(config.topic, p): o for p, o in summary.archived.items()})
            for (tp, node), why in sorted(outcome.follower_failures.items()):
                logger.warning("broker %d did not take the archived offset of %s (it follows its leader's log "
                               "start until the next run): %s", node, tp, why)
    summary.seconds = time.monotonic() - began
    return summary


def _archive_path(topic: str, states: dict[TopicPartition, PartitionArchiveState]) -> str:
    paths = {state.archive_path for state in states.values()}
    path = next(iter(paths), None)
    if not path or len(paths) != 1:
        raise ArchiveJobError(f"topic {topic!r} sets no spate.archive.path; set it (spate topics alter-config) "
                              "or pass --table")
    return path


def _copy(spark: SparkSession, config: ArchiveConfig, table: str, plan: PartitionPlan) -> None:
    logger.info("archiving %s-%d offsets [%d, %d) into %s", config.topic, plan.partition, plan.start, plan.until,
                table)
    (archive_rows(spark, config, plan).write.format("spate-delta").mode("append")
     .option("partitionBy", DATE_COLUMN)
     .option("txnAppId", archive_app_id(config.topic, plan.partition))
     .option("txnVersion", str(plan.until))
     .save(table))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/archive.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--topic", required=True, help="the topic to archive (it sets spate.archive.path)")
    parser.add_argument("--bootstrap-server", default=os.environ.get(BOOTSTRAP_ENV) or "127.0.0.1:9092",
                        help=f"broker(s), host:port[,host:port] (default: ${BOOTSTRAP_ENV} or 127.0.0.1:9092)")
    parser.add_argument("--table", help="the Delta table (default: the topic's spate.archive.path)")
    parser.add_argument("--all", action="store_true",
                        help="archive everything committed so far, not only what retention is about to delete")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = ArchiveConfig(args.topic, args.bootstrap_server, args.table, args.all)
    configure_job_logging()
    spark = SparkSession.builder.appName(f"spate-archive-{config.topic}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        summary = run_archive(spark, config)
    except Exception as exc:  # noqa: BLE001 - reported as the job's failure
        logger.error("archiving %s failed: %s", config.topic, str(exc).splitlines()[0] if str(exc) else exc)
        return 1
    logger.info("archived %d offset(s) of %s into %s in %.1f s; archived offsets now %s", summary.offsets_copied,
                config.topic, summary.table, summary.seconds, summary.archived or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
