"""Every performance target of Spate in one command: the benchmarks' tables, then how each target fared.

    .venv/bin/python -m tests.perf.report [--quick] [--plots DIR] [--only spark-read spark-stream spark-sink brokers scale]

Runs, one after another, each on brokers (and a Spark session) of its own:

* ``spark-read``: ``spark_read_bench``, batch read into ``noop`` against
  Parquet and against a Python data source yielding ready-made Arrow
  batches, 100 B and 1 KB values;
* ``spark-stream``: ``spark_stream_bench``, topic → topic at 10,000
  records/s under a 100 ms trigger (and, full size, with no sink);
* ``spark-sink``: ``spark_sink_bench``, exactly-once against at-least-once
  at 4 and 8 partitions;
* ``brokers``: ``compare_brokers``, Spate against Tansu with confluent-kafka,
  with the loopback and disk ceilings;
* ``scale``: ``tests.perf.scale``, partitions, connections, log growth and
  consumer groups.

Each prints its own tables as a section; the report ends with a Targets
table: a row per target of the issue (and per case where a benchmark
measures several), the figure from this run, and met or by how much it was
missed. ``--quick`` runs everything at small sizes (a few minutes in all):
the targets are then evaluated against the sizes that ran, which each row
names. ``--plots DIR`` writes the scale benchmarks' plots there. A
benchmark that fails is reported as such (its targets' rows say so), the
others still run, and the command exits 1. The machine may be shared:
compare figures within one run.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

from tests.perf import compare_brokers, scale, spark_read_bench, spark_sink_bench, spark_stream_bench
from tests.perf.report_targets import BENCHES, Results, StreamFigures, evaluate, table

# Each benchmark's arguments: (full size, --quick). The full sizes are the ones the README's figures use.
SPARK_READ_ARGS = ([], ["--records", "200000", "--records-1k", "50000", "--runs", "2"])
SPARK_STREAM_ARGS = (
    ["--rate", "10000", "--source-only"],
    ["--rate", "10000", "--seconds", "10", "--warmup", "3", "--records", "20000"],
)
SPARK_SINK_ARGS = ([], ["--records", "20000", "--max-offsets-per-trigger", "5000", "--rounds", "1",
                        "--commit-rounds", "2"])
BROKERS_ARGS = ([], ["--records", "30000", "--rounds", "2", "--spate-tools-records", "5000", "--disk-mb", "128"])


def section(title: str) -> None:
    print(f"\n## {title}\n", flush=True)


def sizes(choice: tuple[list[str], list[str]], quick: bool) -> list[str]:
    return choice[1] if quick else choice[0]


def run_spark_read(results: Results, plots: Path | None) -> None:
    args = spark_read_bench.parse_args(sizes(SPARK_READ_ARGS, results.quick))
    section("Spark batch read")
    results.spark_read = spark_read_bench.run(args)
    spark_read_bench.print_table(results.spark_read, args.runs)


def run_spark_stream(results: Results, plots: Path | None) -> None:
    args = spark_stream_bench.parse_args(sizes(SPARK_STREAM_ARGS, results.quick))
    section("Spark streaming")
    latency, throughput = spark_stream_bench.run(args)
    results.spark_stream = StreamFigures(args.rate, args.trigger_ms, latency, throughput)
    spark_stream_bench.print_tables(latency, throughput, args)


def run_spark_sink(results: Results, plots: Path | None) -> None:
    args = spark_sink_bench.parse_args(sizes(SPARK_SINK_ARGS, results.quick))
    section("Spark sink")
    runs, commit_ms = spark_sink_bench.run(args)
    results.spark_sink = runs
    spark_sink_bench.print_table(runs, args)
    spark_sink_bench.print_commit_phase(commit_ms, args)


def run_brokers(results: Results, plots: Path | None) -> None:
    section("Spate and Tansu")
    results.brokers = compare_brokers.run(compare_brokers.parse_args(sizes(BROKERS_ARGS, results.quick)))
    compare_brokers.print_tables(results.brokers)


def run_scale(results: Results, plots: Path | None) -> None:
    # The scale benchmarks print their four sections as they go.
    results.scale = scale.run_all(scale.QUICK if results.quick else scale.FULL, plots)


RUNNERS: dict[str, Callable[[Results, Path | None], None]] = {
    "spark-read": run_spark_read,
    "spark-stream": run_spark_stream,
    "spark-sink": run_spark_sink,
    "brokers": run_brokers,
    "scale": run_scale,
}


def run(benches: list[str], quick: bool, plots: Path | None) -> Results:
    """Each benchmark asked for, in the order of ``BENCHES``; one that fails is recorded and the rest still run."""
    results = Results(quick=quick)
    for bench in (b for b in BENCHES if b in benches):
        started = time.monotonic()
        print(f"[{bench}] starting, load average {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        try:
            RUNNERS[bench](results, plots)
        except Exception as exc:  # a long report keeps the other benchmarks' figures
            traceback.print_exc()
            results.failures[bench] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            print(f"\n{bench} failed: {results.failures[bench]}", flush=True)
        print(f"[{bench}] done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes everywhere (a few minutes in all)")
    parser.add_argument("--plots", type=Path, metavar="DIR", help="write the scale benchmarks' plots into DIR")
    parser.add_argument("--only", nargs="+", choices=BENCHES, default=list(BENCHES), metavar="BENCH",
                        help=f"run only these benchmarks ({', '.join(BENCHES)})")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    started = time.monotonic()
    print(f"# Spate performance report{' (--quick)' if args.quick else ''}\n\n"
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the start.", flush=True)
    results = run(args.only, args.quick, args.plots)
    section("Targets")
    print(table(evaluate(results), args.quick))
    print(f"\n{time.monotonic() - started:.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end.")
    return 1 if results.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
