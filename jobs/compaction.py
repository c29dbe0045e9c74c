"""Compact topics with plans computed by Spark: the latest offset of every key, handed to each partition's replicas.

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
keeps the largest offset, then streams each partition's plan to its
replicas in chunks and waits until they applied it. A plan the leader refuses as stale
(the log moved on, leadership changed, retention deleted the range) is made
again, up to ``--max-attempts`` times.

Every replica cleans its own log, as in Kafka: the job asks each replica
of a partition how far its log is clean, plans once from the lowest of those
points (never below the leader's log start) up to the leader's clean end,
and sends the same plan to every replica with dirty records below that end.
Offsets never change, so the plan fits each replica's log; each cleans with
it as far as its own segments and high watermark allow. A follower that
refuses (not caught up yet) is named in the line and cleaned by a later run.

A job killed at any point leaves each replica as it was or compacted by a
whole plan; running it again continues from the cleaner checkpoints (a
follower left behind is planned for from its own checkpoint). Records
written while the job runs lie beyond the plans and are kept.

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
from typing import Callable, Iterable, Iterator, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs.job_logging import configure_job_logging
from spark_ext import SpateDataSource
from spate.client.admin.admin import Admin
from spate.client.admin.clean_plans import DEFAULT_CHUNK_ENTRIES, CleanPlanClient, LogCleaningState, PlanOutcome
from spate.job_progress import ProgressWriter
from spate.protocol import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger("spate.jobs.compaction")

BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"
SPARK_PLANNER = "spark"
PROGRESS_STEP = "partitions compacted"
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


@dataclass(frozen=True)
class ReplicaPlan:
    """One partition's plan range and the replicas that take it (the leader first, when it does)."""

    leader: LogCleaningState
    replicas: tuple[LogCleaningState, ...]
    dirty_start: int
    dirty_end: int
    unreachable: tuple[str, ...] = ()  # replicas that could not describe their log, with the reason

    @property
    def tp(self) -> TopicPartition:
        return self.leader.tp


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
    followers: tuple[str, ...] = ()  # what each follower did with the plan

    @property
    def failed(self) -> bool:
        return self.outcome.startswith("failed")

    def line(self) -> str:
        return (f"{self.tp.topic}-{self.tp.partition}: {self.outcome}; records {self.records_before} -> "
                f"{self.records_after}, bytes {self.bytes_before} -> {self.bytes_after}, keys {self.keys}, "
                f"{self.seconds:.2f}s" + (f", {self.attempts} attempts" if self.attempts > 1 else "")
                + "".join(f"; {follower}" for follower in self.followers))


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


def replica_plan(leader: LogCleaningState, described: dict[int, LogCleaningState | KafkaError]) -> ReplicaPlan:
    """The range to plan for ``leader``'s partition so that every replica dirty below the leader's clean end
    takes the plan: from the lowest first dirty offset among them (not below the leader's log start)."""
    end = leader.clean_end_offset
    followers = [state for node, state in sorted(described.items())
                 if node != leader.leader and isinstance(state, LogCleaningState)]
    taking = [state for state in [leader, *followers] if 0 <= state.first_dirty_offset < end]
    unreachable = tuple(f"replica on broker {node}: {state.message or state}"
                        for node, state in sorted(described.items()) if isinstance(state, KafkaError))
    start = max(leader.log_start_offset, min((state.first_dirty_offset for state in taking), default=end))
    return ReplicaPlan(leader, tuple(taking), min(start, end), end, unreachable)


def latest_offsets(spark: SparkSession, bootstrap: str, plans: Sequence[ReplicaPlan]) -> DataFrame:
    """``(topic, partition, hash, offset)``: the latest offset of every key hash in each partition's range."""
    spark.dataSource.register(SpateDataSource)
    assign: dict[str, list[int]] = {}
    starting: dict[str, dict[str, int]] = {}
    ending: dict[str, dict[str, int]] = {}
    for plan in plans:
        assign.setdefault(plan.tp.topic, []).append(plan.tp.partition)
        starting.setdefault(plan.tp.topic, {})[str(plan.tp.partition)] = plan.dirty_start
        ending.setdefault(plan.tp.topic, {})[str(plan.tp.partition)] = plan.dirty_end
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
    progress = ProgressWriter.from_environment()
    with CleanPlanClient(config.bootstrap_servers) as plans:
        pending = partitions_to_compact(config, plans)
        total = len(pending)

        def reported() -> None:
            progress.update(PROGRESS_STEP, len(reports), total)

        reported()
        for attempt in range(1, config.max_attempts + 1):
            described = plans.describe_replicas([state.tp for state in pending]) if pending else {}
            planned = [replica_plan(state, described.get(state.tp, {})) for state in pending]
            for plan in planned:
                if not plan.replicas:
                    size = plan.leader.size_bytes
                    reports[plan.tp] = PartitionReport(plan.tp, "nothing to clean", bytes_before=size,
                                                       bytes_after=size, attempts=attempt,
                                                       followers=plan.unreachable)
            reported()
            cleanable = [plan for plan in planned if plan.replicas]
            if not cleanable:
                break
            replan = _apply_round(spark, config, plans, cleanable, attempt, reports, reported)
            pending = list(plans.describe(replan).values()) if replan else []
    return [reports[tp] for tp in sorted(reports)]


def _apply_round(spark: SparkSession, config: CompactionConfig, plans: CleanPlanClient,
                 planned: Sequence[ReplicaPlan], attempt: int,
                 reports: dict[TopicPartition, PartitionReport], reported: Callable[[], None]) -> list[TopicPartition]:
    """Plan ``planned`` in one Spark job and send each plan to its replicas; the partitions to plan again."""
    latest = latest_offsets(spark, config.bootstrap_servers, planned).persist()
    replan = []
    try:
        for plan in planned:
            started, keys = time.monotonic(), [0]
            outcomes = plans.apply_to_replicas(
                plan.replicas, plan_entries(latest, plan.tp, keys), dirty_start=plan.dirty_start,
                dirty_end=plan.dirty_end, chunk_entries=config.chunk_entries, timeout_ms=config.apply_timeout_ms,
            )
            report = _report(plan, outcomes, keys[0], time.monotonic() - started, attempt, config.max_attempts)
            if report is None:
                replan.append(plan.tp)
            else:
                reports[plan.tp] = report
                reported()
    finally:
        latest.unpersist()
    return replan


def _report(plan: ReplicaPlan, outcomes: dict[int, PlanOutcome | KafkaError], keys: int, seconds: float,
            attempt: int, max_attempts: int) -> PartitionReport | None:
    """What the partition's line says; None when the leader refused a plan that is worth making again."""
    leader = plan.leader
    followers = [_follower_line(node, outcome) for node, outcome in sorted(outcomes.items()) if node != leader.leader]
    followers += plan.unreachable
    outcome = outcomes.get(leader.leader)
    if isinstance(outcome, KafkaError):
        reason = outcome.message or str(outcome)
        if outcome.code in REPLAN and attempt < max_attempts:
            logger.info("%s: the plan was refused (%s); planning again", plan.tp, reason)
            return None
        return PartitionReport(plan.tp, f"failed: {reason}", keys=keys, seconds=seconds, attempts=attempt,
                               followers=tuple(followers))
    if outcome is None:  # the leader was clean already: only followers took the plan
        return PartitionReport(plan.tp, "followers compacted", bytes_before=leader.size_bytes,
                               bytes_after=leader.size_bytes, keys=keys, seconds=seconds, attempts=attempt,
                               clean_up_to=leader.first_dirty_offset, followers=tuple(followers))
    return PartitionReport(
        plan.tp, "compacted", outcome.records_read, outcome.records_kept, leader.size_bytes,
        outcome.state.size_bytes, keys, seconds, attempt, outcome.state.first_dirty_offset, tuple(followers),
    )


def _follower_line(node: int, outcome: PlanOutcome | KafkaError) -> str:
    if isinstance(outcome, KafkaError):
        logger.warning("the replica on broker %d did not take the plan: %s", node, outcome.message or outcome)
        return f"replica on broker {node} not compacted: {outcome.message or outcome}"
    return (f"replica on broker {node} clean up to {outcome.state.first_dirty_offset}, bytes "
            f"{outcome.state.size_bytes}")


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
    configure_job_logging()
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
