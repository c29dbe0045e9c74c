"""The archive job's throughput: MB/s of records copied from the log into the topic's Delta archive.

    .venv/bin/python -m tests.perf.archive_bench [--mb 64] [--value-size 1000] [--partitions 2] [--rounds 3]

One broker; per round a fresh topic with ``spate.archive.path``,
``retention.ms=1`` (every rolled segment is due at once) and 4 MB segments
receives ``--mb`` MB of values; then ``jobs/archive.py``'s ``run_archive``
runs in process on a ``local[2]`` session, timed end to end (asking the
leaders, the Spark read of each partition's range, the Parquet files, one
Delta commit per partition, reporting the archived offsets). MB/s counts
key and value bytes of the records copied. An archive run of a quarter of a
round warms Spark up first. Prints a Markdown table of every round and the
median. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from jobs.archive import ArchiveConfig, run_archive  # noqa: E402
from tests.perf.spark_bench_support import produce_bulk, spark_session  # noqa: E402
from tests.support.admin_requests import create_topic  # noqa: E402
from tests.support.broker_process import BrokerProcess, running_broker  # noqa: E402

KEY_SIZE = 8


def archiving_topic(bootstrap: str, name: str, table: Path, partitions: int) -> None:
    configs = {"retention.ms": "1", "segment.bytes": str(4 << 20), "spate.archive.path": str(table)}
    result = create_topic(bootstrap, name, partitions=partitions, replication_factor=1, configs=configs)
    if result.error_code:
        raise RuntimeError(f"cannot create {name}: {result.error_message}")


def one_round(spark, bootstrap: str, work: Path, name: str, records: int, args) -> tuple[float, int]:
    table = work / name
    archiving_topic(bootstrap, name, table, args.partitions)
    produce_bulk(bootstrap, name, records, args.value_size, args.partitions)
    started = time.perf_counter()
    summary = run_archive(spark, ArchiveConfig(name, bootstrap))
    return time.perf_counter() - started, summary.offsets_copied


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--value-size", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    records = args.mb * 1_000_000 // args.value_size
    spark = spark_session("spate-archive-bench")
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        work = Path(tmp)
        broker = BrokerProcess(data_dir=work / "broker", overrides={"log.retention.check.interval.ms": "1000"})
        with running_broker(broker) as running:
            one_round(spark, running.bootstrap, work, "warm-up", max(2_000, records // 4), args)
            rows = []
            for number in range(args.rounds):
                seconds, copied = one_round(spark, running.bootstrap, work, f"round-{number}", records, args)
                megabytes = copied * (args.value_size + KEY_SIZE) / 1_000_000
                rows.append((seconds, copied, megabytes / seconds))
    print("| round | records archived | seconds | MB/s |\n|---|---|---|---|")
    for number, (seconds, copied, rate) in enumerate(rows):
        print(f"| {number} | {copied:,} | {seconds:.1f} | {rate:.1f} |")
    print(f"| median | | {statistics.median(r[0] for r in rows):.1f} | "
          f"**{statistics.median(r[2] for r in rows):.1f}** |")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
