"""Batch read throughput of ``format("spate")`` against Parquet, in the same Spark session.

Produces 1,000,000 records of 100-byte values into a topic on a real
broker, then times ``spark.read.format("spate") ... .write.format("noop")``
and the same rows read back from a Parquet file written from them. Prints
records/s for both and their ratio (spate / Parquet). Not part of the test
suite::

    .venv/bin/python tests/perf/spark_read_bench.py [--records 1000000] [--partitions 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.support.broker_process import BrokerProcess  # noqa: E402

TOPIC = "bench-read"
VALUE_SIZE = 100


def produce(bootstrap: str, records: int, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, partitions, 1)])[TOPIC].result(30)
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "linger.ms": 20,
        "batch.size": 1_000_000,
        "queue.buffering.max.messages": 500_000,
    })
    value = b"v" * VALUE_SIZE
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, value=value, key=b"%08d" % i, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records left undelivered")


def spark_session():
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("spate-read-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


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
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="spate-read-bench-"))
    broker = BrokerProcess(data_dir=workdir / "broker").start()
    try:
        started = time.perf_counter()
        produce(broker.bootstrap, args.records, args.partitions)
        print(f"produced {args.records:,} records of {VALUE_SIZE} B in {time.perf_counter() - started:.1f} s")
        spark = spark_session()
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
    ]
    print(f"\n{'read':<26}{'best of ' + str(args.runs) + ' (s)':>16}{'records/s':>14}")
    for name, seconds, rate in rows:
        print(f"{name:<26}{seconds:>16.2f}{rate:>14,.0f}")
    print(f"{'ratio spate / parquet':<26}{'':>16}{spate_rate / parquet_rate:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
