"""The broker at scale, in one command: partitions, connections, log size and consumer groups.

    .venv/bin/python -m tests.perf.scale [--quick] [--plots DIR]

Runs, one after another, each on fresh broker processes:

* ``partition_scale_bench``: 1, 100, 1,000 and 10,000 partitions (creation,
  Metadata latency, produce throughput over every partition record by
  record and in runs, descriptors,
  RSS, SIGKILL recovery, clean stop and restart);
* ``connection_scale_bench``: 1, 100 and 1,000 connections (RSS per
  connection, produce latency at 10 records/s each, connection limits);
* ``log_growth_bench``: one partition's log grown to 20 GB (produce and
  fetch cost per GB);
* ``group_scale_bench``: a 1,000-member group rebalancing, 1,000 groups
  committing every second.

``--quick`` runs each at a small size (a few minutes in all), to check the
benchmarks themselves. ``--plots DIR`` writes ``partitions.png`` and
``log-growth.png`` there. Every table states ratios within this run; the
machine may be shared, so compare rows, not runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.perf import connection_scale_bench, group_scale_bench, log_growth_bench, partition_scale_bench
from tests.perf.measurements import raise_open_file_limit


@dataclass(frozen=True)
class Sizes:
    partitions: tuple[int, ...]
    produce_seconds: float
    connections: tuple[int, ...]
    log_gb: float
    log_step_gb: float
    members: int
    groups: int
    connection_limit: int = 50


FULL = Sizes((1, 100, 1000, 10_000), 8.0, (1, 100, 1000), 20.0, 1.0, 1000, 1000)
QUICK = Sizes((1, 100), 2.0, (1, 50), 0.2, 0.1, 50, 50)
# The suite's run: every benchmark's code path, in seconds.
SMOKE = Sizes((10,), 1.0, (1, 10), 0.02, 0.01, 10, 10, connection_limit=5)


def plot_partitions(rows: list[partition_scale_bench.Row], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = [r.partitions for r in rows]
    figure, axis = plt.subplots(figsize=(7, 4))
    for spread, marker, label in (("round_robin", "o-", "record by record"), ("in_runs", "s-", f"in runs of {partition_scale_bench.RUN_RECORDS}")):
        runs = [getattr(r, spread) for r in rows]
        axis.plot(counts, [run.mb_per_s / runs[0].mb_per_s for run in runs], marker, label=f"{label}, ratio to 1")
    axis.axhline(0.5, color="grey", linestyle="--", label="target 0.5")
    axis.set_xscale("log")
    axis.set_xlabel("partitions on one broker")
    axis.set_ylabel("throughput ratio")
    axis.set_ylim(bottom=0)
    axis.legend()
    figure.suptitle("Produce throughput as partitions grow")
    figure.tight_layout()
    figure.savefig(path)


def section(title: str, body: str) -> None:
    print(f"\n## {title}\n\n{body}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the benchmarks")
    parser.add_argument("--plots", type=Path, metavar="DIR", help="write the plots into DIR")
    args = parser.parse_args(argv)
    run_all(QUICK if args.quick else FULL, args.plots)
    return 0


@dataclass
class ScaleResults:
    """What ``run_all`` measured, for whoever reads the figures beside the printed tables."""

    sizes: Sizes
    partitions: list[partition_scale_bench.Row]
    connections: list[connection_scale_bench.Row]
    log_growth: list[log_growth_bench.Step]
    groups: group_scale_bench.GroupScale


def run_all(sizes: Sizes, plots: Path | None) -> ScaleResults:
    if plots:
        plots.mkdir(parents=True, exist_ok=True)

    raise_open_file_limit()
    rows = []
    for count in sizes.partitions:
        rows.append(partition_scale_bench.measure(count, sizes.produce_seconds, True, {}))
        print(f"{count} partitions measured", file=sys.stderr, flush=True)
    section("Partitions", partition_scale_bench.table(rows))
    if plots:
        plot_partitions(rows, plots / "partitions.png")

    connections, limits = connection_scale_bench.measure_all(list(sizes.connections), sizes.produce_seconds,
                                                              sizes.connection_limit)
    section("Connections", connection_scale_bench.report(connections, limits))

    steps = log_growth_bench.grow(sizes.log_gb, sizes.log_step_gb)
    section("Log size", log_growth_bench.table(steps))
    if plots:
        log_growth_bench.plot(steps, plots / "log-growth.png")

    groups = group_scale_bench.measure(sizes.members, sizes.groups, max(2.0, sizes.produce_seconds))
    section("Consumer groups", group_scale_bench.table(groups))
    return ScaleResults(sizes, rows, connections, steps, groups)


if __name__ == "__main__":
    raise SystemExit(main())
