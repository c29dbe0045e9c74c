"""The ``spate-delta`` sink against Spark's own Parquet writer: rows/s on the same DataFrame, same run.

Builds ``--rows`` rows shaped like the Spark Kafka schema (key, a value of
``--value-size`` bytes, topic, partition, offset, timestamp, timestampType,
empty headers) in ``--partitions`` partitions, caches them, then per round:

* batch: ``df.write.parquet(dir)`` and ``df.write.format("spate-delta").save(dir)``
  (Parquet with zstd, one Delta commit), each into a fresh directory;
* streaming: the same rows, written once as Parquet, read back as a stream
  under ``Trigger.AvailableNow`` into Spark's Parquet file sink and into the
  ``spate-delta`` sink (one Delta commit with its app transaction per batch).

A first round of each kind warms up (JIT, Python workers) and is not
counted. Reports each round, the medians and the ratio sink/Parquet (the target is at
least 0.7). Not part of the test suite::

    .venv/bin/python tests/perf/delta_ingest_bench.py [--rows 1000000] [--value-size 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from deltalake import DeltaTable  # noqa: E402

from tests.perf.spark_bench_support import spark_session  # noqa: E402


def kafka_shaped(spark, rows: int, value_size: int, partitions: int):
    from pyspark.sql import functions as F

    value = F.substring(F.concat(F.sha2(F.col("id").cast("string"), 256), F.repeat(F.lit("x"), value_size)),
                        1, value_size)
    return (
        spark.range(rows, numPartitions=partitions)
        .select(
            F.concat(F.lit("user-"), (F.col("id") % 1000).cast("string")).cast("binary").alias("key"),
            value.cast("binary").alias("value"),
            F.lit("events").alias("topic"),
            (F.col("id") % partitions).cast("int").alias("partition"),
            F.col("id").alias("offset"),
            F.timestamp_millis(F.lit(1_700_000_000_000) + F.col("id")).alias("timestamp"),
            F.lit(0).alias("timestampType"),
            F.array().cast("array<struct<key:string,value:binary>>").alias("headers"),
        )
    )


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def batch_round(df, workdir: Path, rows: int) -> tuple[float, float]:
    parquet_s = timed(lambda: df.write.mode("overwrite").parquet(str(workdir / "parquet")))
    table = workdir / "delta"
    delta_s = timed(lambda: df.write.format("spate-delta").mode("append").save(str(table)))
    assert DeltaTable(str(table)).to_pyarrow_dataset().count_rows() == rows
    shutil.rmtree(workdir / "parquet")
    shutil.rmtree(table)
    return rows / parquet_s, rows / delta_s


def streaming_round(spark, source: Path, schema, workdir: Path, rows: int) -> tuple[float, float]:
    def run(fmt: str, target: Path) -> float:
        stream = spark.readStream.schema(schema).parquet(str(source))
        query = (stream.writeStream.format(fmt).option("checkpointLocation", str(target) + "-ckpt")
                 .trigger(availableNow=True))
        return timed(lambda: query.start(str(target)).awaitTermination())

    parquet_s = run("parquet", workdir / "stream-parquet")
    delta_s = run("spate-delta", workdir / "stream-delta")
    assert DeltaTable(str(workdir / "stream-delta")).to_pyarrow_dataset().count_rows() == rows
    for name in ("stream-parquet", "stream-delta"):
        shutil.rmtree(workdir / name)
        shutil.rmtree(workdir / f"{name}-ckpt")
    return rows / parquet_s, rows / delta_s


def report(kind: str, results: list[tuple[float, float]]) -> float:
    print(f"\n{kind}: rows/s, Parquet vs spate-delta")
    print("| round | df.write.parquet | spate-delta | ratio |")
    print("|---|---|---|---|")
    for n, (parquet, delta) in enumerate(results, 1):
        print(f"| {n} | {parquet:,.0f} | {delta:,.0f} | {delta / parquet:.2f} |")
    parquet = statistics.median(r[0] for r in results)
    delta = statistics.median(r[1] for r in results)
    ratio = statistics.median(r[1] / r[0] for r in results)
    print(f"| median | {parquet:,.0f} | {delta:,.0f} | **{ratio:.2f}** |")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-streaming", action="store_true")
    args = parser.parse_args()

    spark = spark_session("spate-delta-bench", **{"spark.ui.showConsoleProgress": "false"})
    from spark_ext.delta.sink import SpateDeltaDataSource

    spark.dataSource.register(SpateDeltaDataSource)
    df = kafka_shaped(spark, args.rows, args.value_size, args.partitions).cache()
    df.count()
    workdir = Path(tempfile.mkdtemp(prefix="delta-bench-"))
    try:
        batch_round(df, workdir, args.rows)  # warm-up: JIT, Python workers, imports
        batch = [batch_round(df, workdir, args.rows) for _ in range(args.rounds)]
        batch_ratio = report("batch write", batch)
        ratios = [batch_ratio]
        if not args.skip_streaming:
            source = workdir / "source"
            df.write.parquet(str(source))
            streaming_round(spark, source, df.schema, workdir, args.rows)  # warm-up
            stream = [streaming_round(spark, source, df.schema, workdir, args.rows) for _ in range(args.rounds)]
            ratios.append(report("streaming, AvailableNow", stream))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        spark.stop()
    print(f"\ntarget: spate-delta at least 0.7 of Parquet; {'met' if min(ratios) >= 0.7 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
