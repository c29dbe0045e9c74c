"""Batch read throughput of ``format("spate")`` against Parquet, in the same Spark session.

Produces 1,000,000 records of 100-byte values into a topic on a real
broker, then times ``spark.read.format("spate") ... .write.format("noop")``
and the same rows read back from a Parquet file written from them. Prints
records/s for both and their ratio (spate / Parquet). Two more rows tell
where the time goes: a Python data source that only yields ready-made Arrow
batches of the same schema and sizes (the most any Python source can reach
through Spark's Python data source API), and one Python process reading
every partition's range with ``read_range`` (the executor side without
Spark, on one core). ``--profile`` prints the top of a cProfile of that
in-process read. Not part of the test suite::

    .venv/bin/python tests/perf/spark_read_bench.py [--records 1000000] [--partitions 4] [--runs 3] [--profile]
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.perf.spark_bench_support import produce_bulk, spark_session  # noqa: E402
from tests.support.broker_process import BrokerProcess  # noqa: E402

TOPIC = "bench-read"
VALUE_SIZE = 100


def prebuilt_arrow_source(records: int, partitions: int):
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

            from spark_ext.arrow_batches import DEFAULT_MAX_ROWS, arrow_schema

            rows = min(DEFAULT_MAX_ROWS, partition.rows)
            offsets = np.arange(rows, dtype=np.int64)
            batch = pa.RecordBatch.from_arrays(
                [
                    pa.array([b"%08d" % i for i in range(rows)], pa.binary()),
                    pa.array([b"v" * VALUE_SIZE] * rows, pa.binary()),
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


def read_in_process(bootstrap: str, partitions: int, profile: bool) -> tuple[float, int]:
    """Seconds for one process to read every partition with ``read_range``, and the rows read."""
    from spark_ext.offset_ranges import OffsetRange
    from spark_ext.partition_reader import ReadSettings, read_range
    from spate.client import LATEST, Admin, TopicPartition

    tps = [TopicPartition(TOPIC, p) for p in range(partitions)]
    with Admin(bootstrap) as admin:
        ends = admin.list_offsets({tp: LATEST for tp in tps})
    settings = ReadSettings(bootstrap, consumer_settings={"max_partition_fetch_bytes": 8 << 20})
    ranges = [OffsetRange(tp.topic, tp.partition, 0, ends[tp].offset) for tp in tps]
    profiler = cProfile.Profile() if profile else None
    rows = 0
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    for rng in ranges:
        rows += sum(batch.num_rows for batch in read_range(rng, settings))
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - started
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print(out.getvalue())
    return seconds, rows


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--min-partitions", type=int, default=None, help="the source's minPartitions option")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each read; the best counts")
    parser.add_argument("--profile", action="store_true", help="profile the in-process read_range pass")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="spate-read-bench-"))
    broker = BrokerProcess(data_dir=workdir / "broker").start()
    try:
        started = time.perf_counter()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, args.partitions, 1)])[TOPIC].result(30)
        produce_bulk(broker.bootstrap, TOPIC, args.records, VALUE_SIZE, args.partitions)
        print(f"produced {args.records:,} records of {VALUE_SIZE} B in {time.perf_counter() - started:.1f} s")
        local_seconds, local_rows = read_in_process(broker.bootstrap, args.partitions, args.profile)
        if local_rows != args.records:
            raise RuntimeError(f"read_range read {local_rows:,} records, not {args.records:,}")
        spark = spark_session("spate-read-bench")
        reader = (
            spark.read.format("spate")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", TOPIC)
            .option("kafka.max.partition.fetch.bytes", str(8 << 20))
        )
        if args.min_partitions:
            reader = reader.option("minPartitions", str(args.min_partitions))
        parquet = workdir / "rows.parquet"
        reader.load().write.parquet(str(parquet))
        counted = spark.read.parquet(str(parquet)).count()
        if counted != args.records:
            raise RuntimeError(f"the source read {counted:,} records, not {args.records:,}")

        spark.dataSource.register(prebuilt_arrow_source(args.records, args.partitions))
        prebuilt_best = min(
            timed(lambda: spark.read.format("prebuilt_arrow").load().write.format("noop").mode("overwrite").save())
            for _ in range(args.runs)
        )
        spate_best = min(
            timed(lambda: reader.load().write.format("noop").mode("overwrite").save()) for _ in range(args.runs)
        )
        parquet_best = min(
            timed(lambda: spark.read.parquet(str(parquet)).write.format("noop").mode("overwrite").save())
            for _ in range(args.runs)
        )
        spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    spate_rate = args.records / spate_best
    parquet_rate = args.records / parquet_best
    rows = [
        ("format(\"spate\") -> noop", spate_best, spate_rate),
        ("parquet -> noop", parquet_best, parquet_rate),
        ("prebuilt Arrow -> noop", prebuilt_best, args.records / prebuilt_best),
        ("read_range, 1 process", local_seconds, args.records / local_seconds),
    ]
    print(f"\n{'read':<26}{'best of ' + str(args.runs) + ' (s)':>16}{'records/s':>14}   (read_range: one run)")
    for name, seconds, rate in rows:
        print(f"{name:<26}{seconds:>16.2f}{rate:>14,.0f}")
    print(f"{'ratio spate / parquet':<26}{'':>16}{spate_rate / parquet_rate:>14.2f}")
    print(f"{'ratio prebuilt / parquet':<26}{'':>16}{args.records / prebuilt_best / parquet_rate:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
