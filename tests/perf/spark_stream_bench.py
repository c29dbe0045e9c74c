"""Streaming ``topic -> topic`` through ``format("spate")``: micro-batch latency, and throughput per delivery guarantee.

Starts its own broker and a ``local[2]`` SparkSession and runs the query of
``jobs/copy_topic.py`` (each value becomes ``<value>|<partition>|<offset>``):

* latency: a producer writes ``--rate`` records/s of ``--value-size`` bytes
  (the send time inside) into a topic for ``--seconds``, while the query runs
  with a ``--trigger-ms`` processing-time trigger. Reported: p50/p95/max of
  ``durationMs.triggerExecution`` over micro-batches that read rows (after
  ``--warmup`` seconds), and p50/p95/p99 of end-to-end record latency, send to
  receipt by a read_committed consumer of the output topic.
* with ``--source-only``, the same latency with no sink: each micro-batch's
  rows are collected on the driver (``foreachBatch``), so what remains is
  the source and Spark's own cost per micro-batch (``--guarantees none``
  runs only that one);
* throughput: ``--records`` records are produced first, then copied under
  ``Trigger.AvailableNow`` once per delivery guarantee (fresh checkpoint and
  output topic each time); records/s is the input count over the query's
  wall time, start to termination.

Not part of the test suite::

    .venv/bin/python tests/perf/spark_stream_bench.py [--records 500000] [--rate 1000] [--seconds 30] \\
        [--trigger-ms 100] [--partitions 4] [--skip-latency] [--skip-throughput]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from confluent_kafka import Consumer, KafkaError, Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.perf.spark_bench_support import produce_bulk, spark_session  # noqa: E402
from tests.support.broker_process import BrokerProcess  # noqa: E402

GUARANTEES = ("exactly_once", "at_least_once")


@dataclass
class LatencyResult:
    guarantee: str
    batch_ms: list[float] = field(default_factory=list)
    record_ms: list[float] = field(default_factory=list)
    produced: int = 0
    # durationMs part (addBatch, latestOffset, walCommit, ...) -> values over the measured batches
    parts_ms: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class ThroughputResult:
    guarantee: str
    records: int
    seconds: float
    batches: int

    @property
    def rate(self) -> float:
        return self.records / self.seconds


def create_topics(bootstrap: str, names: list[str], partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1) for name in names]).values():
        future.result(30)


def produce_at_rate(bootstrap: str, topic: str, rate: int, seconds: float, value_size: int) -> int:
    """``rate`` records/s for ``seconds``, each value starting with its send time in ns."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
    interval = 1.0 / rate
    started = time.perf_counter()
    sent = 0
    while True:
        due = started + sent * interval
        now = time.perf_counter()
        if now - started >= seconds:
            break
        if due > now:
            time.sleep(min(due - now, 0.01))
            continue
        stamp = b"%d" % time.time_ns()
        producer.produce(topic, value=stamp + b" " * max(0, value_size - len(stamp)), key=b"%08d" % sent)
        sent += 1
        producer.poll(0)
    if producer.flush(60):
        raise RuntimeError("records left undelivered")
    return sent


def consume_latencies(bootstrap: str, topic: str, stop: threading.Event, out: list[tuple[int, float]]) -> None:
    """Append ``(send time ns, latency ms)`` for every output record a read_committed consumer sees."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"latency-{topic}",
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 10,
    })
    consumer.subscribe([topic])
    try:
        while not stop.is_set():
            for message in consumer.consume(1000, 0.1):
                if message.error():
                    if message.error().code() != KafkaError._PARTITION_EOF:
                        raise RuntimeError(message.error())
                    continue
                received = time.time_ns()
                sent = int(message.value().split(b"|", 1)[0])
                out.append((sent, (received - sent) / 1e6))
    finally:
        consumer.close()


def run_latency(spark, bootstrap: str, workdir: Path, guarantee: str, args: argparse.Namespace) -> LatencyResult:
    """Latency of the topic -> topic copy; a record counts once a read_committed consumer sees its copy."""
    from jobs.copy_topic import start_query

    source, sink = f"lat-in-{guarantee}", f"lat-out-{guarantee}"
    create_topics(bootstrap, [source, sink], args.partitions)
    query = start_query(
        spark, bootstrap=bootstrap, source=source, sink=sink, checkpoint=str(workdir / f"ckpt-lat-{guarantee}"),
        delivery=guarantee, trigger_ms=args.trigger_ms,
    )
    stop = threading.Event()
    seen: list[tuple[int, float]] = []
    reader = threading.Thread(target=consume_latencies, args=(bootstrap, sink, stop, seen), daemon=True)
    reader.start()
    try:
        return measure_latency(query, bootstrap, source, guarantee, seen, args)
    finally:
        stop.set()
        reader.join(30)


def run_driver_latency(spark, bootstrap: str, workdir: Path, args: argparse.Namespace) -> LatencyResult:
    """Latency of the source alone: each micro-batch's rows are collected on the driver (foreachBatch).

    A record counts when its micro-batch's rows reach the driver; no sink
    writes anything, so what remains is the source and Spark's own cost.
    """
    source = "lat-in-driver"
    create_topics(bootstrap, [source], args.partitions)
    seen: list[tuple[int, float]] = []

    def collect(batch, batch_id: int) -> None:
        rows = batch.select("value").collect()
        received = time.time_ns()
        seen.extend((sent, (received - sent) / 1e6) for sent in (int(row.value.split(b" ", 1)[0]) for row in rows))

    query = (
        spark.readStream.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(workdir / "ckpt-lat-driver"))
        .trigger(processingTime=f"{args.trigger_ms} milliseconds")
        .start()
    )
    return measure_latency(query, bootstrap, source, "source -> driver", seen, args)


def measure_latency(query, bootstrap: str, source: str, name: str, seen: list, args) -> LatencyResult:
    result = LatencyResult(name)
    try:
        measure_from = time.time_ns() + int(args.warmup * 1e9)
        result.produced = produce_at_rate(bootstrap, source, args.rate, args.seconds, args.value_size)
        deadline = time.monotonic() + 60
        while len(seen) < result.produced and time.monotonic() < deadline:
            time.sleep(0.2)
        progress = list(query.recentProgress)
    finally:
        query.stop()
    if len(seen) < result.produced:
        raise RuntimeError(f"{name}: the output shows {len(seen):,} of {result.produced:,} records")
    summarise(result, progress, seen, measure_from)
    return result


def summarise(result: LatencyResult, progress: list, seen: list, measure_from: int) -> None:
    measure_from_iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(measure_from / 1e9))
    measured = [p for p in progress if p.numInputRows > 0 and p.timestamp[:19] >= measure_from_iso]
    result.batch_ms = [float(p.durationMs["triggerExecution"]) for p in measured]
    for p in measured:
        for part, ms in p.durationMs.items():
            if part != "triggerExecution":
                result.parts_ms.setdefault(part, []).append(float(ms))
    result.record_ms = [latency for sent, latency in seen if sent >= measure_from]


def run_throughput(spark, bootstrap: str, workdir: Path, source: str, guarantee: str, args) -> ThroughputResult:
    from jobs.copy_topic import start_query

    sink = f"tput-out-{guarantee}"
    create_topics(bootstrap, [sink], args.partitions)
    started = time.perf_counter()
    query = start_query(
        spark, bootstrap=bootstrap, source=source, sink=sink, checkpoint=str(workdir / f"ckpt-tput-{guarantee}"),
        delivery=guarantee, available_now=True, max_offsets_per_trigger=args.max_offsets_per_trigger,
    )
    query.awaitTermination()
    seconds = time.perf_counter() - started
    batches = sum(1 for p in query.recentProgress if p.numInputRows > 0)
    written = (
        spark.read.format("spate").option("bootstrap.servers", bootstrap).option("subscribe", sink)
        .option("isolation.level", "read_committed").load().count()
    )
    if written < args.records:
        raise RuntimeError(f"{guarantee}: {written:,} records reached {sink}, not {args.records:,}")
    return ThroughputResult(guarantee, args.records, seconds, batches)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def print_tables(latency: list[LatencyResult], throughput: list[ThroughputResult], args) -> None:
    if latency:
        print(f"\nlatency: {args.rate:,} records/s of {args.value_size} B for {args.seconds:.0f} s, "
              f"processingTime {args.trigger_ms} ms, {args.partitions} partitions (first {args.warmup:.0f} s skipped)")
        print(f"{'sink':<18}{'batches':>9}{'batch p50':>11}{'p95':>8}{'max':>8}"
              f"{'records':>10}{'e2e p50':>10}{'p95':>8}{'p99':>8}   (ms)")
        for r in latency:
            print(f"{r.guarantee:<18}{len(r.batch_ms):>9}{percentile(r.batch_ms, 50):>11.0f}"
                  f"{percentile(r.batch_ms, 95):>8.0f}{max(r.batch_ms, default=float('nan')):>8.0f}"
                  f"{len(r.record_ms):>10,}{percentile(r.record_ms, 50):>10.0f}{percentile(r.record_ms, 95):>8.0f}"
                  f"{percentile(r.record_ms, 99):>8.0f}")
        print("\nmicro-batch time by part, p50 ms (Spark's durationMs)")
        parts = sorted({part for r in latency for part in r.parts_ms})
        print(f"{'sink':<18}" + "".join(f"{part:>17}" for part in parts))
        for r in latency:
            cells = "".join(f"{percentile(r.parts_ms.get(part, []), 50):>17.0f}" for part in parts)
            print(f"{r.guarantee:<18}{cells}")
    if throughput:
        print(f"\nthroughput: {args.records:,} records of {args.value_size} B, topic -> topic, Trigger.AvailableNow, "
              f"{args.partitions} partitions")
        print(f"{'sink':<18}{'batches':>9}{'seconds':>10}{'records/s':>12}")
        for r in throughput:
            print(f"{r.guarantee:<16}{r.batches:>9}{r.seconds:>10.1f}{r.rate:>12,.0f}")
        if len(throughput) == 2:
            print(f"{'exactly_once / at_least_once':<35}{throughput[0].rate / throughput[1].rate:>12.2f}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000, help="records for the throughput runs")
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--max-offsets-per-trigger", type=int, default=None, help="split the AvailableNow run")
    parser.add_argument("--rate", type=int, default=1_000, help="records/s of the latency producer")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the latency producer runs")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of latency data left out")
    parser.add_argument("--trigger-ms", type=int, default=100, help="processingTime trigger of the latency query")
    parser.add_argument("--guarantees", default=",".join(GUARANTEES), help="comma-separated delivery guarantees")
    parser.add_argument("--source-only", action="store_true",
                        help="also measure latency with the rows collected on the driver instead of a sink")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    args.guarantees = [g.strip() for g in args.guarantees.split(",") if g.strip() and g.strip() != "none"]
    for guarantee in args.guarantees:
        if guarantee not in GUARANTEES:
            parser.error(f"unknown delivery guarantee {guarantee!r}")
    return args


def run(args: argparse.Namespace) -> tuple[list[LatencyResult], list[ThroughputResult]]:
    """The latency runs, then the throughput runs, on a broker and a Spark session of their own."""
    workdir = Path(tempfile.mkdtemp(prefix="spate-stream-bench-"))
    broker = BrokerProcess(data_dir=workdir / "broker").start()
    latency: list[LatencyResult] = []
    throughput: list[ThroughputResult] = []
    try:
        recent_progress = max(1000, int(args.seconds * 1000 / max(args.trigger_ms, 1)) + 100)
        spark = spark_session(
            "spate-stream-bench", **{"spark.sql.streaming.numRecentProgressUpdates": str(recent_progress)}
        )
        try:
            if not args.skip_latency:
                if args.source_only:
                    latency.append(run_driver_latency(spark, broker.bootstrap, workdir, args))
                for guarantee in args.guarantees:
                    latency.append(run_latency(spark, broker.bootstrap, workdir, guarantee, args))
            if not args.skip_throughput:
                source = "tput-in"
                create_topics(broker.bootstrap, [source], args.partitions)
                started = time.perf_counter()
                produce_bulk(broker.bootstrap, source, args.records, args.value_size)
                print(f"produced {args.records:,} records of {args.value_size} B in "
                      f"{time.perf_counter() - started:.1f} s")
                for guarantee in args.guarantees:
                    throughput.append(run_throughput(spark, broker.bootstrap, workdir, source, guarantee, args))
        finally:
            spark.stop()
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return latency, throughput


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    latency, throughput = run(args)
    print_tables(latency, throughput, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
