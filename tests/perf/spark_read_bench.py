"""Batch read throughput of ``format("spate")`` against Parquet and against the Python data source ceiling.

For each value size (100 B and 1 KB by default) produces records into a
topic on a real broker, then times, in the same Spark session,
``spark.read.format("spate") ... .write.format("noop")``, the same rows
read back from a Parquet file written from them, and a Python data source
that only yields ready-made Arrow batches of the same schema, sizes and
values (the ceiling: the most any Python source reaches through Spark's
Python data source API). Prints records/s and both ratios, spate / Parquet
and spate / ceiling. One more row times one Python process reading every
partition's range with ``read_range`` (the executor side without Spark, on
one core); ``--profile`` prints the top of a cProfile of that read. Not part
of the test suite::

    .venv/bin/python tests/perf/spark_read_bench.py [--records 1000000] [--records-1k 250000] \\
        [--value-sizes 100,1000] [--partitions 4] [--runs 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.perf.spark_bench_support import produce_bulk, spark_session  # noqa: E402
from tests.support.broker_process import BrokerProcess  # noqa: E402

TOPIC = "bench-read"


@dataclass
class SizeResult:
    value_size: int
    records: int
    spate_s: float
    parquet_s: float
    ceiling_s: float
    local_s: float


def prebuilt_arrow_source(records: int, partitions: int, value_size: int):
    """A Python data source yielding the same Arrow batch over and over: the API's own cost."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Share(InputPartition):
        def __init__(self, rows: int) -> None:
            self.rows = rows

    class Reader(DataSourceReader):
        def partitions(self):
            share = records // partitions
            return [Share(share + (1 if p < records % partitions else 0)) for p in range(partitions)]

        def read(self, partition):
            import numpy as np
            import pyarrow as pa

            from spark_ext.arrow_batches import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, arrow_schema

            # Batches as big as the source builds them: up to a row count or about a byte size.
            key_size = 8
            rows = min(DEFAULT_MAX_ROWS, -(-DEFAULT_MAX_BYTES // (key_size + value_size)), partition.rows)
            offsets = np.arange(rows, dtype=np.int64)
            batch = pa.RecordBatch.from_arrays(
                [
                    pa.array([b"%08d" % i for i in range(rows)], pa.binary()),
                    pa.array([b"v" * value_size] * rows, pa.binary()),
                    pa.array([TOPIC] * rows),
                    pa.array(np.zeros(rows, np.int32)),
                    pa.array(offsets),
                    pa.array(offsets * 1000, pa.timestamp("us", tz="UTC")),
                    pa.array(np.zeros(rows, np.int32)),
                ],
                schema=arrow_schema(False),
            )
            left = partition.rows
            while left > 0:
                yield batch.slice(0, min(rows, left))
                left -= rows

    class PrebuiltArrow(DataSource):
        @classmethod
        def name(cls) -> str:
            return "prebuilt_arrow"

        def schema(self):
            from spark_ext.arrow_batches import source_schema

            return source_schema(False)

        def reader(self, schema):
            return Reader()

    return PrebuiltArrow


def read_in_process(bootstrap: str, topic: str, partitions: int, profile: bool) -> tuple[float, int]:
    """Seconds for one process to read every partition with ``read_range``, and the rows read."""
    from spark_ext.consumer_cache import ConsumerCache
    from spark_ext.offset_ranges import OffsetRange
    from spark_ext.partition_reader import ReadSettings, read_range
    from spate.client import LATEST, Admin, TopicPartition

    tps = [TopicPartition(topic, p) for p in range(partitions)]
    with Admin(bootstrap) as admin:
        ends = admin.list_offsets({tp: LATEST for tp in tps})
    settings = ReadSettings(bootstrap, consumer_settings={"max_partition_fetch_bytes": 8 << 20})
    ranges = [OffsetRange(tp.topic, tp.partition, 0, ends[tp].offset) for tp in tps]
    profiler = cProfile.Profile() if profile else None
    rows = 0
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    # As an executor does: each consumer goes back to a cache, and is not closed (closing waits for the
    # fetch it has in flight, up to fetch.max.wait.ms) inside the timed read.
    cache = ConsumerCache()
    for rng in ranges:
        rows += sum(batch.num_rows for batch in read_range(rng, settings, cache=cache))
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - started
    cache.close()
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return seconds, rows


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def measure(spark, bootstrap: str, workdir: Path, value_size: int, records: int, args) -> SizeResult:
    topic = f"{TOPIC}-{value_size}"
    started = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(30)
    produce_bulk(bootstrap, topic, records, value_size, args.partitions)
    print(f"produced {records:,} records of {value_size} B in {time.perf_counter() - started:.1f} s")
    local_seconds, local_rows = read_in_process(bootstrap, topic, args.partitions, args.profile)
    if local_rows != records:
        raise RuntimeError(f"read_range read {local_rows:,} records, not {records:,}")
    reader = (
        spark.read.format("spate")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("kafka.max.partition.fetch.bytes", str(8 << 20))
    )
    if args.min_partitions:
        reader = reader.option("minPartitions", str(args.min_partitions))
    parquet = workdir / f"rows-{value_size}.parquet"
    reader.load().write.parquet(str(parquet))
    counted = spark.read.parquet(str(parquet)).count()
    if counted != records:
        raise RuntimeError(f"the source read {counted:,} records, not {records:,}")
    spark.dataSource.register(prebuilt_arrow_source(records, args.partitions, value_size))

    loads = {
        "ceiling": lambda: spark.read.format("prebuilt_arrow").load(),
        "spate": reader.load,
        "parquet": lambda: spark.read.parquet(str(parquet)),
    }
    # Runs take turns, so that load from elsewhere on the machine hits all three alike; the best run counts.
    best = {name: float("inf") for name in loads}
    for _ in range(args.runs):
        for name, load in loads.items():
            best[name] = min(best[name], timed(lambda: load().write.format("noop").mode("overwrite").save()))
    return SizeResult(value_size, records, best["spate"], best["parquet"], best["ceiling"], local_seconds)


def print_table(results: list[SizeResult], runs: int) -> None:
    print(f"\n{'value':>6}{'records':>11}  {'read':<24}{'best of ' + str(runs) + ' (s)':>15}{'records/s':>13}")
    for r in results:
        rows = [
            ('format("spate") -> noop', r.spate_s),
            ("parquet -> noop", r.parquet_s),
            ("ceiling (Arrow) -> noop", r.ceiling_s),
            ("read_range, 1 process", r.local_s),
        ]
        for name, seconds in rows:
            print(f"{r.value_size:>5}B{r.records:>11,}  {name:<24}{seconds:>15.2f}{r.records / seconds:>13,.0f}")
    print(f"\n{'value':>6}{'spate / parquet':>17}{'spate / ceiling':>17}{'ceiling / parquet':>19}   "
          "(targets: >= 0.5, >= 0.9)")
    for r in results:
        print(f"{r.value_size:>5}B{r.parquet_s / r.spate_s:>17.2f}{r.ceiling_s / r.spate_s:>17.2f}"
              f"{r.parquet_s / r.ceiling_s:>19.2f}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="records of 100 B (and other sizes < 1000)")
    parser.add_argument("--records-1k", type=int, default=250_000, help="records of 1000 B or more")
    parser.add_argument("--value-sizes", default="100,1000", help="comma-separated value sizes in bytes")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--min-partitions", type=int, default=None, help="the source's minPartitions option")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each read; the best counts")
    parser.add_argument("--profile", action="store_true", help="profile the in-process read_range pass")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> list[SizeResult]:
    """Every value size's timings, on a broker and a Spark session of their own."""
    sizes = [int(size) for size in args.value_sizes.split(",") if size.strip()]
    workdir = Path(tempfile.mkdtemp(prefix="spate-read-bench-"))
    broker = BrokerProcess(data_dir=workdir / "broker").start()
    results: list[SizeResult] = []
    try:
        spark = spark_session("spate-read-bench")
        try:
            for size in sizes:
                records = args.records_1k if size >= 1000 else args.records
                results.append(measure(spark, broker.bootstrap, workdir, size, records, args))
        finally:
            spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print_table(run(args), args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
