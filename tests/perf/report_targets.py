"""The performance targets, and how one run's figures measure up to them.

Pure: :func:`evaluate` takes the figures the benchmarks returned
(:class:`Results`, a field per benchmark, ``None`` when it did not run)
and gives a :class:`TargetRow` per target and case; nothing here starts a
broker or Spark. The targets are stated for the full sizes; a run at
smaller sizes (``--quick``) is evaluated against the sizes it ran, and each
row's case names them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tests.perf.compare_brokers import Comparison
from tests.perf.scale import ScaleResults
from tests.perf.spark_read_bench import SizeResult
from tests.perf.spark_sink_bench import SinkRun
from tests.perf.spark_stream_bench import LatencyResult, ThroughputResult, percentile

# The benchmarks of the report, by the names ``--only`` takes, in the order they run.
BENCHES = ("spark-read", "spark-stream", "spark-sink", "brokers", "scale")

# The full sizes the targets are stated for.
PARTITIONS_TARGET = 10_000
CONNECTIONS_TARGET = 1_000
LOG_TARGET_GB = 20.0
MEMBERS_TARGET = 1_000
GROUPS_TARGET = 1_000
STREAM_RATE_TARGET = 10_000
STREAM_TRIGGER_MS = 100
# "Flat" cost as the log grows: the last step within this factor of the first.
FLAT_WITHIN = 1.5


@dataclass(frozen=True)
class Target:
    """One line of the issue: a figure that must be at least (or at most) ``threshold``."""

    text: str
    threshold: float
    at_least: bool
    unit: str = ""
    digits: int = 2

    def show(self, value: float) -> str:
        return f"{value:,.{self.digits}f}{self.unit}"

    def show_threshold(self) -> str:
        shown = f"{self.threshold:,.{self.digits}f}"
        return (shown.rstrip("0").rstrip(".") if "." in shown else shown) + self.unit

    def verdict(self, value: float) -> str:
        """"met", or by how much it was missed: "0.32 of 0.5: missed by 1.6x"."""
        if math.isnan(value):
            return "no figure"
        if value >= self.threshold if self.at_least else value <= self.threshold:
            return "met"
        if value <= 0 or self.threshold <= 0:
            return f"{self.show(value)}: missed"
        factor = self.threshold / value if self.at_least else value / self.threshold
        by = f"{factor:.2f}x" if factor < 1.1 else f"{factor:.1f}x"
        return f"{self.show(value)} of {self.show_threshold()}: missed by {by}"


READ_PARQUET = Target("Spark batch read into noop: spate / Parquet ≥ 0.5", 0.5, True)
READ_CEILING = Target("Spark batch read into noop: spate / ceiling (ready-made Arrow batches) ≥ 0.9", 0.9, True)
STREAM_BATCH = Target("Streaming, 100 ms trigger, 10,000 records/s: micro-batch p50 ≤ 300 ms", 300, False, " ms", 0)
STREAM_E2E = Target("Streaming, 100 ms trigger, 10,000 records/s: end-to-end p99 ≤ 1 s", 1000, False, " ms", 0)
SINK = Target("Exactly-once sink throughput ≥ 0.8 of at-least-once (8 partitions; 4 reported)", 0.8, True)
PRODUCE_100 = Target("100 B produce ≥ 1.0× Tansu (confluent-kafka, same run)", 1.0, True)
KB_1 = Target("1 KB produce and consume ≥ 1.5× Tansu (confluent-kafka, same run)", 1.5, True)
PARTITIONS = Target("10,000 partitions: produce throughput ≥ 0.5 of 1 partition", 0.5, True)
RESTART = Target("10,000 partitions: clean restart ≤ 10 s", 10.0, False, " s", 1)
CONNECTIONS_P99 = Target("1,000 active producer connections: p99 ≤ 50 ms", 50.0, False, " ms", 1)
CONNECTIONS_ERRORS = Target("1,000 active producer connections: no errors", 0, False, " errors", 0)
LOG_PRODUCE = Target(f"Log growth 1 → 20 GB: produce rate flat (last step ≥ 1/{FLAT_WITHIN:g} of the first's)",
                     1 / FLAT_WITHIN, True)
LOG_FETCH = Target(f"Log growth 1 → 20 GB: fetch p50 flat (last step ≤ {FLAT_WITHIN:g}× the first's)",
                   FLAT_WITHIN, False)
REBALANCE = Target("1,000-member group rebalance ≤ 5 s", 5.0, False, " s")
COMMIT_RATE = Target("1,000 groups committing every second, sustained: ≥ 0.95 of the asked rate", 0.95, True)
COMMIT_FAILURES = Target("1,000 groups committing every second, sustained: no failed commit", 0, False, " failures", 0)

# Every target each benchmark's figures are measured against, for the rows of a benchmark that did not run.
TARGETS_OF = {
    "spark-read": (READ_PARQUET, READ_CEILING),
    "spark-stream": (STREAM_BATCH, STREAM_E2E),
    "spark-sink": (SINK,),
    "brokers": (PRODUCE_100, KB_1),
    "scale": (PARTITIONS, RESTART, CONNECTIONS_P99, CONNECTIONS_ERRORS, LOG_PRODUCE, LOG_FETCH, REBALANCE,
              COMMIT_RATE, COMMIT_FAILURES),
}


@dataclass(frozen=True)
class TargetRow:
    target: str
    case: str
    measured: str
    result: str


@dataclass
class StreamFigures:
    """The streaming benchmark's runs and the load they were measured under."""

    rate: int
    trigger_ms: int
    latency: list[LatencyResult]
    throughput: list[ThroughputResult] = field(default_factory=list)


@dataclass
class Results:
    """One report run: each benchmark's figures, ``None`` when it was not run (or failed: see ``failures``)."""

    quick: bool = False
    spark_read: list[SizeResult] | None = None
    spark_stream: StreamFigures | None = None
    spark_sink: list[SinkRun] | None = None
    brokers: Comparison | None = None
    scale: ScaleResults | None = None
    failures: dict[str, str] = field(default_factory=dict)


def row(target: Target, case: str, value: float) -> TargetRow:
    return TargetRow(target.text, case, target.show(value), target.verdict(value))


def at_size(measured: int, target: int, noun: str) -> str:
    """The case's size, saying so when it is smaller than the target's."""
    if measured >= target:
        return f"{measured:,} {noun}"
    return f"{measured:,} {noun} (largest run; target at {target:,})"


def read_rows(results: list[SizeResult]) -> list[TargetRow]:
    rows = []
    for r in results:
        case = f"{r.value_size:,} B, {r.records:,} records"
        rows.append(row(READ_PARQUET, case, r.parquet_s / r.spate_s))
        rows.append(row(READ_CEILING, case, r.ceiling_s / r.spate_s))
    return rows


def stream_rows(figures: StreamFigures) -> list[TargetRow]:
    load = f"{figures.rate:,} records/s, {figures.trigger_ms} ms trigger"
    if (figures.rate, figures.trigger_ms) != (STREAM_RATE_TARGET, STREAM_TRIGGER_MS):
        load += f" (target at {STREAM_RATE_TARGET:,} records/s, {STREAM_TRIGGER_MS} ms)"
    rows = []
    for r in figures.latency:
        rows.append(row(STREAM_BATCH, f"{r.guarantee}, {load}", percentile(r.batch_ms, 50)))
        rows.append(row(STREAM_E2E, f"{r.guarantee}, {load}", percentile(r.record_ms, 99)))
    return rows


def sink_rows(runs: list[SinkRun]) -> list[TargetRow]:
    rows = []
    for partitions in sorted({r.partitions for r in runs}, reverse=True):
        by = {r.guarantee: r for r in runs if r.partitions == partitions}
        if {"exactly_once", "at_least_once"} <= by.keys():
            ratio = by["exactly_once"].rate / by["at_least_once"].rate
            rows.append(row(SINK, f"{partitions} partitions, {by['exactly_once'].records:,} records", ratio))
    return rows


def broker_rows(comparison: Comparison) -> list[TargetRow]:
    rows = [row(PRODUCE_100, f"produce, acks={acks}", comparison.ratio(100, acks, "produce")) for acks in ("1", "all")]
    rows += [row(KB_1, f"{phase}, acks={acks}", comparison.ratio(1024, acks, phase))
             for phase in ("produce", "consume") for acks in ("1", "all")]
    return rows


def scale_rows(scale: ScaleResults) -> list[TargetRow]:
    first, last = scale.partitions[0], scale.partitions[-1]
    partitions = at_size(last.partitions, PARTITIONS_TARGET, "partitions")
    against = f"against {first.partitions:,}"
    rows = [
        row(PARTITIONS, f"{partitions}, record by record, {against}",
            last.round_robin.mb_per_s / first.round_robin.mb_per_s),
        row(PARTITIONS, f"{partitions}, in runs, {against}", last.in_runs.mb_per_s / first.in_runs.mb_per_s),
        row(RESTART, partitions, math.nan if last.restart_s is None else last.restart_s),
    ]
    busiest = scale.connections[-1]
    connections = at_size(busiest.connections, CONNECTIONS_TARGET, "connections")
    rows += [row(CONNECTIONS_P99, connections, busiest.p99_ms), row(CONNECTIONS_ERRORS, connections, busiest.errors)]
    start, end = scale.log_growth[0], scale.log_growth[-1]
    grown = f"{start.size_gb:.1f} → {end.size_gb:.1f} GB"
    if end.size_gb < LOG_TARGET_GB:
        grown += f" (target to {LOG_TARGET_GB:g} GB)"
    rows += [row(LOG_PRODUCE, grown, end.produce_mb_s / start.produce_mb_s),
             row(LOG_FETCH, grown, end.fetch_p50_ms / start.fetch_p50_ms)]
    groups = scale.groups
    members = at_size(groups.members, MEMBERS_TARGET, "members")
    rows += [row(REBALANCE, f"{protocol}, {members}", r["seconds"]) for protocol, r in groups.rebalances.items()]
    if groups.commits is not None:
        committing = at_size(groups.groups, GROUPS_TARGET, "groups")
        rows += [row(COMMIT_RATE, committing, groups.commits["achieved_per_s"] / groups.groups),
                 row(COMMIT_FAILURES, committing, groups.commits["failures"])]
    return rows


def not_measured(bench: str, why: str) -> list[TargetRow]:
    return [TargetRow(target.text, "–", "–", why) for target in TARGETS_OF[bench]]


def evaluate(results: Results) -> list[TargetRow]:
    """A row per target and case, in the order of the issue; a benchmark not run gives "not run" rows."""
    measured = {
        "spark-read": (results.spark_read, read_rows),
        "spark-stream": (results.spark_stream, stream_rows),
        "spark-sink": (results.spark_sink, sink_rows),
        "brokers": (results.brokers, broker_rows),
        "scale": (results.scale, scale_rows),
    }
    rows: list[TargetRow] = []
    for bench in BENCHES:
        figures, rows_of = measured[bench]
        if bench in results.failures:
            rows += not_measured(bench, f"failed: {results.failures[bench]}")
        elif figures is None:
            rows += not_measured(bench, "not run (--only)")
        else:
            rows += rows_of(figures)
    return rows


def table(rows: list[TargetRow], quick: bool) -> str:
    lines = ["| target | case | measured | result |", "|---|---|---:|---|"]
    lines += [f"| {r.target} | {r.case} | {r.measured} | {r.result} |" for r in rows]
    met = sum(r.result == "met" for r in rows)
    lines += ["", f"{met} of {len(rows)} met."]
    if quick:
        lines.append("--quick: every figure comes from the small sizes named in the case column, not the "
                     "targets' sizes; run without --quick for the figures the targets are about.")
    return "\n".join(lines)
