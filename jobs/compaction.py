"""Compact topics with plans computed by Spark: the latest offset of every key, handed to each partition's leader.

::

    spark-submit jobs/compaction.py --topic changelog [--topic ...] --bootstrap-server 127.0.0.1:9092
    spate jobs run compaction --topic changelog --bootstrap-server 127.0.0.1:9092     (the same, through spate)

Without ``--topic`` it compacts every topic set to
``spate.compaction.planner=spark`` whose log is due (its dirty share reached
``min.cleanable.dirty.ratio``). For each partition the leader says (over
Spate's CleanPlan request, from any host) where the dirty range starts (the
cleaner checkpoint) and how far it may be cleaned (a segment boundary below
the active segment, the high watermark and open transactions). The job
reads those ranges with the ``spate`` source (``read_committed``: records of
aborted transactions and transaction markers name no key, as in the broker's
own planner; keyless records neither), groups by the MD5 of the key and
keeps the largest offset, then streams each partition's plan to its leader
in chunks and waits until it is applied. A plan the leader refuses as stale
(the log moved on, leadership changed, retention deleted the range) is made
again, up to ``--max-attempts`` times.

A job killed at any point leaves each partition as it was or compacted by a
whole plan; running it again continues from the cleaner checkpoints.
Records written while the job runs lie beyond the plans and are kept.

Prints one line per partition: records of the cleaned range before/after,
the partition's bytes before/after, keys planned, time. Exit codes: 0 done
(also when nothing was due), 1 a partition could not be compacted, 2 bad
arguments.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_ext import SpateDataSource
from spate.client.admin.admin import Admin
from spate.client.admin.clean_plans import DEFAULT_CHUNK_ENTRIES, CleanPlanClient, LogCleaningState
from spate.protocol import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger("spate.jobs.compaction")

BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"
SPARK_PLANNER = "spark"
# Refusals after which the partition is described and planned again.
REPLAN = frozenset({
    ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.REQUEST_TIMED_OUT,
})


@dataclass(frozen=True)
class CompactionConfig:
    bootstrap_servers: str
    topics: tuple[str, ...] = ()  # empty: every due topic planned by Spark
    max_attempts: int = 3
    chunk_entries: int = DEFAULT_CHUNK_ENTRIES
    apply_timeout_ms: int = 600_000


@dataclass
class PartitionReport:
    tp: TopicPartition
    outcome: str  # "compacted", "nothing to clean" or "failed: <reason>"
    records_before: int = 0
    records_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    keys: int = 0
    seconds: float = 0.0
    attempts: int = 0
    clean_up_to: int = -1  # the partition's cleaner checkpoint afterwards: the end of the plan applied

    @property
    def failed(self) -> bool:
        return self.outcome.startswith("failed")

    def line(self) -> str:
        return (f"{self.tp.topic}-{self.tp.partition}: {self.outcome}; records {self.records_before} -> "
                f"{self.records_after}, bytes {self.bytes_before} -> {self.bytes_after}, keys {self.keys}, "
                f"{self.seconds:.2f}s" + (f", {self.attempts} attempts" if self.attempts > 1 else ""))


# --- what to compact --------------------------------------------------------------------------------


def partitions_to_compact(config: CompactionConfig, plans: CleanPlanClient) -> list[LogCleaningState]:
    """The named topics' partitions, or every due partition of the topics planned by Spark."""
    with Admin(config.bootstrap_servers) as admin:
        topics = admin.describe_topics(list(config.topics) or None)
    wanted = [TopicPartition(name, p.partition) for name, topic in topics.items() if not topic.is_internal
              for p in topic.partitions]
    states = plans.describe(wanted) if wanted else {}
    if config.topics:
        return list(states.values())
    return [state for state in states.values() if state.planner == SPARK_PLANNER and state.due]


# --- planning with Spark ----------------------------------------------------------------------------


def latest_offsets(spark: SparkSession, bootstrap: str, states: Sequence[LogCleaningState]) -> DataFrame:
    """``(topic, partition, hash, offset)``: the latest offset of every key hash in each partition's dirty range."""
    spark.dataSource.register(SpateDataSource)
    assign: dict[str, list[int]] = {}
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for state in states:
        assign.setdefault(state.tp.topic, []).append(state.tp.partition)
        starting.setdefault(state.tp.topic, {})[str(state.tp.partition)] = state.first_dirty_offset
        ending.setdefault(state.tp.topic, {})[str(state.tp.partition)] = state.clean_end_offset
    records = (
        spark.read.format("spate")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("assign", json.dumps(assign))
        .option("startingOffsets", json.dumps(starting))
        .option("endingOffsets", json.dumps(ending))
        .option("isolation.level", "read_committed")
        .option("failOnDataLoss", "false")  # the leader refuses a plan whose range retention removed
        # Split each range so every executor core reads part of it.
        .option("minPartitions", str(max(1, spark.sparkContext.defaultParallelism) * 2))
        .load()
    )
    return (
        records.where(F.col("key").isNotNull())
        .groupBy("topic", "partition", F.unhex(F.md5(F.col("key"))).alias("hash"))
        .agg(F.max("offset").alias("offset"))
    )


def plan_entries(latest: DataFrame, tp: TopicPartition, counter: list[int]) -> Iterator[tuple[bytes, int]]:
    """One partition's plan, streamed from the executors (``counter[0]`` counts the keys)."""
    rows = latest.where((F.col("topic") == tp.topic) & (F.col("partition") == tp.partition))
    for row in rows.select("hash", "offset").toLocalIterator():
        counter[0] += 1
        yield bytes(row["hash"]), row["offset"]


# --- applying ---------------------------------------------------------------------------------------


def compact(spark: SparkSession, config: CompactionConfig) -> list[PartitionReport]:
    reports: dict[TopicPartition, PartitionReport] = {}
    with CleanPlanClient(config.bootstrap_servers) as plans:
        pending = partitions_to_compact(config, plans)
        for attempt in range(1, config.max_attempts + 1):
            for state in pending:
                if not state.cleanable:
                    reports[state.tp] = PartitionReport(state.tp, "nothing to clean", bytes_before=state.size_bytes,
                                                        bytes_after=state.size_bytes, attempts=attempt)
            cleanable = [state for state in pending if state.cleanable]
            if not cleanable:
                break
            replan = _apply_round(spark, config, plans, cleanable, attempt, reports)
            pending = list(plans.describe(replan).values()) if replan else []
    return [reports[tp] for tp in sorted(reports)]


def _apply_round(spark: SparkSession, config: CompactionConfig, plans: CleanPlanClient,
                 states: Sequence[LogCleaningState], attempt: int,
                 reports: dict[TopicPartition, PartitionReport]) -> list[TopicPartition]:
    """Plan ``states`` in one Spark job and apply each plan; the partitions to plan again."""
    latest = latest_offsets(spark, config.bootstrap_servers, states).persist()
    replan = []
    try:
        for state in states:
            started, keys = time.monotonic(), [0]
            try:
                outcome = plans.apply(state, plan_entries(latest, state.tp, keys), chunk_entries=config.chunk_entries,
                                      timeout_ms=config.apply_timeout_ms)
            except KafkaError as exc:
                reason = exc.message or str(exc)
                if exc.code in REPLAN and attempt < config.max_attempts:
                    logger.info("%s: the plan was refused (%s); planning again", state.tp, reason)
                    replan.append(state.tp)
                else:
                    reports[state.tp] = PartitionReport(state.tp, f"failed: {reason}", keys=keys[0],
                                                        seconds=time.monotonic() - started, attempts=attempt)
                continue
            reports[state.tp] = PartitionReport(
                state.tp, "compacted", outcome.records_read, outcome.records_kept, state.size_bytes,
                outcome.state.size_bytes, keys[0], time.monotonic() - started, attempt,
                outcome.state.first_dirty_offset,
            )
    finally:
        latest.unpersist()
    return replan


# --- command line -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/compaction.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--topic", action="append", default=[],
                        help="a topic to compact (repeat for several; default: every due topic whose "
                        "spate.compaction.planner is spark)")
    parser.add_argument("--bootstrap-server", default=os.environ.get(BOOTSTRAP_ENV) or "127.0.0.1:9092",
                        help=f"broker(s), host:port[,host:port] (default: ${BOOTSTRAP_ENV} or 127.0.0.1:9092)")
    parser.add_argument("--max-attempts", type=int, default=3, help="plans per partition when leaders refuse "
                        "them as stale (default 3)")
    parser.add_argument("--chunk-entries", type=int, default=DEFAULT_CHUNK_ENTRIES,
                        help=f"keys per plan chunk sent to a leader (default {DEFAULT_CHUNK_ENTRIES})")
    parser.add_argument("--apply-timeout", type=float, default=600.0,
                        help="seconds to wait for a leader to apply a plan (default 600)")
    return parser


def config_from(args: argparse.Namespace, parser: argparse.ArgumentParser) -> CompactionConfig:
    topics = tuple(dict.fromkeys(t.strip() for arg in args.topic for t in arg.split(",") if t.strip()))
    if args.max_attempts < 1:
        parser.error("--max-attempts must be at least 1")
    if args.chunk_entries < 1:
        parser.error("--chunk-entries must be at least 1")
    if args.apply_timeout <= 0:
        parser.error("--apply-timeout must be positive")
    return CompactionConfig(args.bootstrap_server, topics, args.max_attempts, args.chunk_entries,
                            int(args.apply_timeout * 1000))


def report(reports: Iterable[PartitionReport]) -> None:
    for entry in reports:
        print(entry.line(), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    config = config_from(parser.parse_args(argv), parser)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    spark = SparkSession.builder.appName("spate-compaction").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    what = ", ".join(config.topics) or "every due topic planned by spark"
    logger.info("compacting %s through %s", what, config.bootstrap_servers)
    try:
        reports = compact(spark, config)
    except KafkaError as exc:
        logger.error("compaction failed: %s", exc)
        return 1
    report(reports)
    if not reports:
        logger.info("nothing to compact")
    return 1 if any(entry.failed for entry in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
