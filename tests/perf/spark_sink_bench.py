"""The spate sink's throughput: exactly-once against at-least-once, ``topic -> topic``, at 4 and 8 partitions.

Starts its own broker and a ``local[2]`` SparkSession. For each partition
count, ``--records`` records of ``--value-size`` bytes are produced into a
source topic of that many partitions, then copied by the query of
``jobs/copy_topic.py`` under ``Trigger.AvailableNow`` (split into
micro-batches of ``--max-offsets-per-trigger`` records) once per delivery
guarantee, each with a fresh checkpoint and an output topic of the same
partition count. The guarantees alternate for ``--rounds`` rounds (after a
small warm-up copy) and each keeps its best run, so a busy machine skews the
ratio less. Records/s is the input count over the query's wall time, start
to termination; the p50 of Spark's ``addBatch`` time per micro-batch
(the tasks' writes plus the driver's commit) is printed next to it.

Then the driver's commit alone: ``--commit-rounds`` times, one open
transaction per partition (each holding a few records, handed off as a task
does) is committed with ``commitParallelism`` 1 (one after another), 2, 4
and 8, and the median time of each is printed: once against the broker on
loopback, once against a second broker reached through a proxy that holds
each chunk ``--commit-delay-ms`` (a network's round trip).

Not part of the test suite::

    .venv/bin/python tests/perf/spark_sink_bench.py [--records 200000] [--partitions 4,8] \\
        [--max-offsets-per-trigger 50000] [--commit-parallelism N]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.perf.latency_proxy import LatencyProxy  # noqa: E402
from tests.perf.spark_bench_support import produce_bulk, spark_session  # noqa: E402
from tests.support.broker_process import BrokerProcess, free_port  # noqa: E402

GUARANTEES = ("exactly_once", "at_least_once")


@dataclass
class SinkRun:
    guarantee: str
    partitions: int
    records: int
    seconds: float
    batches: int
    add_batch_ms: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.records / self.seconds


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def start_copy(spark, bootstrap: str, source: str, sink: str, checkpoint: str, guarantee: str, args):
    """The query of ``jobs/copy_topic.py`` under AvailableNow, with the sink options of this run."""
    from jobs.copy_topic import transform

    reader = (
        spark.readStream.format("spate").option("bootstrap.servers", bootstrap).option("subscribe", source)
        .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", str(args.max_offsets_per_trigger))
        # A task, and so a transaction, per partition even for short ranges: what is measured is the
        # sink committing that many transactions a micro-batch.
        .option("minRecordsPerPartition", "1")
    )
    writer = (
        transform(reader.load()).writeStream.format("spate")
        .option("bootstrap.servers", bootstrap).option("topic", sink)
        .option("checkpointLocation", checkpoint).option("deliveryGuarantee", guarantee)
    )
    if args.commit_parallelism is not None:
        writer = writer.option("commitParallelism", str(args.commit_parallelism))
    return writer.trigger(availableNow=True).start()


def copy_once(
    spark, bootstrap: str, workdir: Path, source: str, partitions: int, guarantee: str, args, run: int = 0
) -> SinkRun:
    """One AvailableNow copy of ``source`` into a new topic; checks every record arrived."""
    sink = f"sink-{partitions}-{guarantee}-{run}"
    create_topic(bootstrap, sink, partitions)
    started = time.perf_counter()
    query = start_copy(spark, bootstrap, source, sink, str(workdir / f"ckpt-{sink}"), guarantee, args)
    query.awaitTermination()
    seconds = time.perf_counter() - started
    if query.exception() is not None:
        raise RuntimeError(f"{guarantee} at {partitions} partitions failed: {query.exception()}")
    measured = [p for p in query.recentProgress if p.numInputRows > 0]
    written = (
        spark.read.format("spate").option("bootstrap.servers", bootstrap).option("subscribe", sink)
        .option("isolation.level", "read_committed").load().count()
    )
    if written < args.records:
        raise RuntimeError(f"{guarantee}: {written:,} records reached {sink}, not {args.records:,}")
    add_batch = [float(p.durationMs.get("addBatch", 0)) for p in measured]
    return SinkRun(guarantee, partitions, args.records, seconds, len(measured), add_batch)


def open_transactions(bootstrap: str, topic: str, partitions: int, tag: str) -> list:
    """One handed-off transaction per partition, as the exactly-once tasks leave them for the driver."""
    from spate.client import Producer, hand_off_transaction

    handed = []
    for partition in range(partitions):
        producer = Producer(bootstrap, transactional_id=f"bench-{tag}-{partition}")
        producer.init_transactions(30_000)
        producer.begin_transaction()
        for i in range(10):
            producer.send(topic, b"x" * 100, partition=partition)
        handed.append(hand_off_transaction(producer, timeout_ms=30_000))
    return handed


COMMIT_PARALLELISMS = (1, 2, 4, 8)


def measure_commit_phase(bootstrap: str, partitions: int, rounds: int) -> dict[int, float]:
    """Median ms to commit ``partitions`` open transactions, by commit parallelism."""
    from spark_ext.client_pool import ClientPool
    from spark_ext.sink_parallel_commit import ParallelTransactionCompleter

    topic = f"commit-phase-{partitions}"
    create_topic(bootstrap, topic, partitions)
    times: dict[int, list[float]] = {parallelism: [] for parallelism in COMMIT_PARALLELISMS}
    pool = ClientPool(reaper=False)
    try:
        for run in range(rounds):
            for parallelism in times:
                handed = open_transactions(bootstrap, topic, partitions, f"{partitions}-{parallelism}")
                committer = ParallelTransactionCompleter(bootstrap, parallelism=parallelism, pool=pool)
                if run == 0:  # connections made here, as in a driver's first micro-batch: not measured
                    committer.complete_all(handed, commit=True, timeout_ms=60_000)
                    continue
                started = time.perf_counter()
                committer.complete_all(handed, commit=True, timeout_ms=60_000)
                times[parallelism].append((time.perf_counter() - started) * 1000)
    finally:
        pool.close()
    return {parallelism: statistics.median(values) for parallelism, values in times.items()}


def measure_behind_proxy(workdir: Path, counts: list[int], args) -> dict[tuple[str, int], dict[int, float]]:
    """The commit phase against a broker that clients reach through a LatencyProxy only."""
    port = free_port()
    broker = BrokerProcess(
        data_dir=workdir / "proxied-broker", overrides={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}"}
    ).start()
    proxy = LatencyProxy(broker.port, args.commit_delay_ms / 1000, listen_port=port)
    where = f"+{args.commit_delay_ms:g} ms"
    try:
        return {
            (where, partitions): measure_commit_phase(f"127.0.0.1:{port}", partitions, args.commit_rounds + 1)
            for partitions in counts
        }
    finally:
        proxy.close()
        broker.stop()


def print_commit_phase(commit_ms: dict[tuple[str, int], dict[int, float]], args) -> None:
    print(f"\ndriver commit of one open transaction per partition, median ms of {args.commit_rounds} runs")
    print(f"{'broker':>10}{'partitions':>12}" + "".join(f"{f'parallelism {p}':>16}" for p in COMMIT_PARALLELISMS))
    for (where, partitions), by_parallelism in commit_ms.items():
        cells = "".join(f"{by_parallelism[p]:>16.1f}" for p in COMMIT_PARALLELISMS)
        print(f"{where:>10}{partitions:>12}{cells}")


def warm_up(spark, bootstrap: str, workdir: Path, guarantees: list[str], args) -> None:
    """A small copy per guarantee first, so the JVM's and the workers' start-up is not measured."""
    small = argparse.Namespace(**{**vars(args), "records": 5_000, "max_offsets_per_trigger": 2_500})
    create_topic(bootstrap, "warm-up", 2)
    produce_bulk(bootstrap, "warm-up", small.records, args.value_size, 2)
    for guarantee in guarantees:
        copy_once(spark, bootstrap, workdir, "warm-up", 2, guarantee, small, run=-1)


def run_copies(bootstrap: str, workdir: Path, counts: list[int], guarantees: list[str], args) -> list[SinkRun]:
    """The copies of every partition count, guarantees alternating; the best run of each guarantee."""
    spark = spark_session("spate-sink-bench", **{"spark.ui.showConsoleProgress": "false"})
    runs: list[SinkRun] = []
    try:
        warm_up(spark, bootstrap, workdir, guarantees, args)
        for partitions in counts:
            source = f"source-{partitions}"
            create_topic(bootstrap, source, partitions)
            produce_bulk(bootstrap, source, args.records, args.value_size, partitions)
            best: dict[str, SinkRun] = {}
            for run in range(args.rounds):
                for guarantee in guarantees:
                    result = copy_once(spark, bootstrap, workdir, source, partitions, guarantee, args, run)
                    print(f"{partitions} partitions, {guarantee}, round {run + 1}: {result.rate:,.0f} records/s",
                          flush=True)
                    if guarantee not in best or result.rate > best[guarantee].rate:
                        best[guarantee] = result
            runs.extend(best[g] for g in guarantees)
    finally:
        spark.stop()
    return runs


def print_table(runs: list[SinkRun], args) -> None:
    print(f"\nspate sink: {args.records:,} records of {args.value_size} B, topic -> topic, Trigger.AvailableNow, "
          f"{args.max_offsets_per_trigger:,} records per micro-batch")
    print(f"{'partitions':>10}  {'guarantee':<15}{'batches':>8}{'seconds':>9}{'records/s':>11}{'addBatch p50 ms':>17}")
    for r in runs:
        p50 = statistics.median(r.add_batch_ms) if r.add_batch_ms else float("nan")
        print(f"{r.partitions:>10}  {r.guarantee:<15}{r.batches:>8}{r.seconds:>9.1f}{r.rate:>11,.0f}{p50:>17.0f}")
    for partitions in sorted({r.partitions for r in runs}):
        by = {r.guarantee: r for r in runs if r.partitions == partitions}
        if len(by) == 2:
            ratio = by["exactly_once"].rate / by["at_least_once"].rate
            print(f"exactly_once / at_least_once at {partitions} partitions: {ratio:.2f}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--partitions", default="4,8", help="comma-separated partition counts")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=50_000)
    parser.add_argument("--commit-parallelism", type=int, default=None, help="the sink's commitParallelism")
    parser.add_argument("--guarantees", default=",".join(GUARANTEES))
    parser.add_argument("--commit-only", action="store_true", help="only the commit-phase measurement")
    parser.add_argument("--rounds", type=int, default=2, help="runs per guarantee; the best counts")
    parser.add_argument("--commit-rounds", type=int, default=6, help="runs of the commit-phase measurement")
    parser.add_argument("--commit-delay-ms", type=float, default=2.0, help="one-way delay of the proxied broker")
    return parser.parse_args(argv)


CommitTimes = dict[tuple[str, int], dict[int, float]]


def run(args: argparse.Namespace) -> tuple[list[SinkRun], CommitTimes]:
    """The copies (best run of each guarantee per partition count), then the driver's commit phase."""
    counts = [int(p) for p in args.partitions.split(",") if p.strip()]
    guarantees = [g.strip() for g in args.guarantees.split(",") if g.strip()]
    workdir = Path(tempfile.mkdtemp(prefix="spate-sink-bench-"))
    broker = BrokerProcess(data_dir=workdir / "broker").start()
    runs: list[SinkRun] = []
    commit_ms: CommitTimes = {}
    try:
        if not args.commit_only:
            runs = run_copies(broker.bootstrap, workdir, counts, guarantees, args)
        for partitions in counts:
            commit_ms["loopback", partitions] = measure_commit_phase(
                broker.bootstrap, partitions, args.commit_rounds + 1
            )
    finally:
        broker.stop()
    try:
        commit_ms.update(measure_behind_proxy(workdir, counts, args))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return runs, commit_ms


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    runs, commit_ms = run(args)
    if runs:
        print_table(runs, args)
    print_commit_phase(commit_ms, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
