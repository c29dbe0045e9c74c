"""Transaction throughput of a Spate broker, measured with confluent-kafka.

    .venv/bin/python -m tests.perf.txn_bench [--small-txns 500] [--large-txns 10] [--fetch-mb 200]

Starts its own broker process (data under a scratch directory on the
repository's disk) and measures:

* small transactions: begin, one 100 B record to one partition, commit;
  one producer sequentially, then four producers (distinct transactional
  ids) in parallel threads. Reported as transactions/s.
* large transactions: 10 MB per transaction (1 KB records spread over three
  partitions) from one producer. Reported as MB/s, commit included.
* read_committed against read_uncommitted: a 3-partition topic written as
  transactions of 1,000 × 1 KB records, every fifth one aborted, is read
  from the start at both isolation levels, alternately, three times each.
  Reported as log MB/s (bytes of the whole log, aborted records included,
  per second; median read) and delivered records/s; read_committed delivers
  only the committed four fifths, and librdkafka drops the aborted records
  itself from the aborted-transaction list the broker sends.

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess

BROKER_OVERRIDES = {
    "transaction.state.log.num.partitions": "5",
    "offsets.topic.num.partitions": "5",
    "log.segment.bytes": str(512 * 1024**2),
}
SMALL_RECORD = 100
LARGE_RECORD = 1024
LARGE_TXN_BYTES = 10 * 1024**2
FETCH_TXN_RECORDS = 1000
ABORT_EVERY = 5
PARALLEL_PRODUCERS = 4
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Row:
    workload: str
    rate: str
    detail: str


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def transactional_producer(bootstrap: str, txn_id: str, **extra: object) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, **extra})
    producer.init_transactions(TIMEOUT_S)
    return producer


def produce_all(producer: Producer, topic: str, payload: bytes, count: int, partitions: int) -> None:
    for index in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=index % partitions)
                break
            except BufferError:
                producer.poll(0.005)


@dataclass
class SmallRun:
    latencies: list[float]
    started: float
    finished: float


def small_transactions(bootstrap: str, topic: str, txn_id: str, count: int,
                       ready: threading.Barrier | None = None) -> SmallRun:
    """``count`` one-record transactions, timed from the first begin (after ``ready``) to the last commit."""
    producer = transactional_producer(bootstrap, txn_id, **{"linger.ms": 0})
    payload = os.urandom(SMALL_RECORD)
    if ready is not None:
        ready.wait(TIMEOUT_S)
    latencies = []
    started = time.perf_counter()
    for _ in range(count):
        start = time.perf_counter()
        producer.begin_transaction()
        producer.produce(topic, payload, partition=0)
        producer.commit_transaction(TIMEOUT_S)
        latencies.append(time.perf_counter() - start)
    return SmallRun(latencies, started, time.perf_counter())


def measure_small(bootstrap: str, count: int) -> list[Row]:
    create_topic(bootstrap, "txn-small", 1)
    alone = small_transactions(bootstrap, "txn-small", "bench-small", count)
    rows = [Row("small txn (1 × 100 B, 1 partition), 1 producer",
                f"{count / (alone.finished - alone.started):,.0f} txn/s", latency_summary(alone.latencies))]

    per_producer = max(1, count // PARALLEL_PRODUCERS)
    ready = threading.Barrier(PARALLEL_PRODUCERS)
    runs: dict[int, SmallRun] = {}

    def run(index: int) -> None:
        runs[index] = small_transactions(bootstrap, "txn-small", f"bench-small-{index}", per_producer, ready)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(PARALLEL_PRODUCERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(runs) != PARALLEL_PRODUCERS:
        raise RuntimeError("a parallel producer did not finish its transactions")
    elapsed = max(r.finished for r in runs.values()) - min(r.started for r in runs.values())
    together = [latency for r in runs.values() for latency in r.latencies]
    rows.append(Row(f"small txn, {PARALLEL_PRODUCERS} producers in parallel (same partition)",
                    f"{len(together) / elapsed:,.0f} txn/s", latency_summary(together)))
    return rows


def latency_summary(latencies: list[float]) -> str:
    return f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {quantile(latencies, 0.99) * 1000:.1f} ms"


def measure_large(bootstrap: str, count: int) -> list[Row]:
    create_topic(bootstrap, "txn-large", 3)
    producer = transactional_producer(bootstrap, "bench-large", **{
        "linger.ms": 5, "batch.size": 1_000_000, "queue.buffering.max.kbytes": 1_048_576,
    })
    payload = os.urandom(LARGE_RECORD)
    per_txn = LARGE_TXN_BYTES // LARGE_RECORD
    durations = []
    for _ in range(count):
        start = time.perf_counter()
        producer.begin_transaction()
        produce_all(producer, "txn-large", payload, per_txn, 3)
        producer.commit_transaction(TIMEOUT_S)
        durations.append(time.perf_counter() - start)
    megabytes = count * per_txn * LARGE_RECORD / 1e6
    return [Row("large txn (10 MB of 1 KB records, 3 partitions)", f"{megabytes / sum(durations):,.1f} MB/s",
                f"{count} txns, median {statistics.median(durations):.2f} s each")]


def write_mixed(bootstrap: str, topic: str, transactions: int) -> tuple[int, int]:
    """Transactions of FETCH_TXN_RECORDS records, every ABORT_EVERY-th aborted; (written, committed)."""
    producer = transactional_producer(bootstrap, "bench-mixed", **{
        "linger.ms": 5, "batch.size": 1_000_000, "queue.buffering.max.kbytes": 1_048_576,
    })
    payload = os.urandom(LARGE_RECORD)
    committed = 0
    for index in range(transactions):
        producer.begin_transaction()
        produce_all(producer, topic, payload, FETCH_TXN_RECORDS, 3)
        if index % ABORT_EVERY == ABORT_EVERY - 1:
            producer.flush(TIMEOUT_S)  # the aborted records reach the log before the abort marker
            producer.abort_transaction(TIMEOUT_S)
        else:
            producer.commit_transaction(TIMEOUT_S)
            committed += FETCH_TXN_RECORDS
    return transactions * FETCH_TXN_RECORDS, committed


def read_all(bootstrap: str, topic: str, isolation: str, expected: int) -> float:
    """Seconds to receive ``expected`` records from the start of every partition."""
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"bench-{isolation}", "enable.auto.commit": False,
        "isolation.level": isolation, "fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760,
    })
    consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
    seen = 0
    start = time.perf_counter()
    deadline = start + 120
    try:
        while seen < expected and time.perf_counter() < deadline:
            seen += sum(1 for message in consumer.consume(10_000, 1.0) if message.error() is None)
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    if seen != expected:
        raise RuntimeError(f"{isolation} read {seen} records, expected {expected}")
    return elapsed


def measure_fetch(bootstrap: str, megabytes: int, rounds: int) -> list[Row]:
    create_topic(bootstrap, "txn-mixed", 3)
    transactions = max(ABORT_EVERY, megabytes * 1_000_000 // (FETCH_TXN_RECORDS * LARGE_RECORD))
    written, committed = write_mixed(bootstrap, "txn-mixed", transactions)
    log_mb = written * LARGE_RECORD / 1e6
    levels = (("read_uncommitted", written), ("read_committed", committed))
    timings: dict[str, list[float]] = {isolation: [] for isolation, _ in levels}
    # Alternate the levels so both see the same page cache and machine load.
    for _ in range(rounds):
        for isolation, expected in levels:
            timings[isolation].append(read_all(bootstrap, "txn-mixed", isolation, expected))
    rows = []
    for isolation, expected in levels:
        seconds = statistics.median(timings[isolation])
        rows.append(Row(f"fetch {isolation} ({log_mb:.0f} MB log, 1 in {ABORT_EVERY} txns aborted)",
                        f"{log_mb / seconds:,.1f} MB/s",
                        f"{expected / seconds:,.0f} records/s delivered; median of {rounds} reads"))
    overhead = statistics.median(timings["read_committed"]) / statistics.median(timings["read_uncommitted"]) - 1
    rows.append(Row("read_committed overhead (time to read the whole log)", f"{overhead:+.0%}", ""))
    return rows


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small-txns", type=int, default=500, help="one-record transactions per run")
    parser.add_argument("--large-txns", type=int, default=10, help="10 MB transactions")
    parser.add_argument("--fetch-mb", type=int, default=200, help="size of the mixed log read at both levels")
    parser.add_argument("--fetch-rounds", type=int, default=3, help="reads of the mixed log per level")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(dir=repo, prefix=".perf-") as scratch:
        broker = BrokerProcess(Path(scratch) / "spate", overrides=dict(BROKER_OVERRIDES)).start()
        try:
            rows = measure_small(broker.bootstrap, args.small_txns)
            rows += measure_large(broker.bootstrap, args.large_txns)
            rows += measure_fetch(broker.bootstrap, args.fetch_mb, args.fetch_rounds)
        finally:
            broker.stop()
    print(f"\nSpate transactions, confluent-kafka, {os.cpu_count()} CPUs\n")
    print("| workload | rate | detail |")
    print("|---|---|---|")
    for row in rows:
        print(f"| {row.workload} | {row.rate} | {row.detail} |")


if __name__ == "__main__":
    main()
