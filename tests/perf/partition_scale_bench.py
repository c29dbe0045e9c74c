"""One broker holding many partitions: produce throughput, descriptors, memory, creation and crash recovery.

    .venv/bin/python -m tests.perf.partition_scale_bench [--partitions 1,100,1000,10000] [--seconds 8] [--no-recovery]

For each partition count, fresh ``spate broker start`` processes (their soft
open-file limit raised to the hard one) get one topic of that many
partitions; then:

* creation: seconds from CreateTopics until a produce to the last partition
  is acknowledged (every partition's log exists by then);
* produce: confluent-kafka sends 1 KB records over every partition (acks=1,
  linger.ms=5, no compression) for ``--seconds``, two ways, each on a fresh
  broker (a second run on the same broker would meet the first one's dirty
  pages being written back):
  - round-robin: record by record, the worst case for batching: at 10,000
    partitions each batch holds a few records;
  - in runs: ``--run-records`` (64) records to a partition, then the next,
    through every partition in turn, as Kafka's Java producer spreads records
    without a key (KIP-794: a partition until ``batch.size`` bytes, here
    64 KB, then the next);
  MB/s counts acknowledged bytes; the CPU per record of the client (this
  process, librdkafka's threads included) and of the broker process are
  printed beside, as client and broker share the machine's cores;
* metadata: the median latency of 20 Metadata requests (v12) for the topic;
* descriptors (``/proc/PID/fd``) and RSS of the broker after the produce run;
* recovery: the broker is killed with SIGKILL and started again on the same
  data; seconds from the restart until a produce to the first and to the
  last partition is acknowledged;
* clean restart: the broker is stopped with SIGTERM (seconds until it exits)
  and started again; seconds until produces to the first and the last
  partition are acknowledged.

Prints a Markdown table with the ratio of each row's throughputs to the
1-partition row's. The machine may be shared: compare rows of one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import KafkaException, Message
from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka.admin import AdminClient, NewTopic

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.metadata import MetadataRequest
from tests.perf.measurements import cpu_seconds, open_files, raise_open_file_limit, rss_kb
from tests.support.broker_process import BrokerProcess
from tests.support.raw_client import RawClient

RECORD_SIZE = 1024
TOPIC = "scale"
RUN_RECORDS = 64


@dataclass
class ProduceRun:
    records: int
    seconds: float
    partitions_written: int
    client_cpu_s: float
    broker_cpu_s: float

    @property
    def mb_per_s(self) -> float:
        return self.records * RECORD_SIZE / self.seconds / 1e6

    @property
    def client_us_per_record(self) -> float:
        return self.client_cpu_s / max(self.records, 1) * 1e6

    @property
    def broker_us_per_record(self) -> float:
        return self.broker_cpu_s / max(self.records, 1) * 1e6


@dataclass
class Row:
    partitions: int
    round_robin: ProduceRun
    in_runs: ProduceRun
    fds: int
    rss_mb: float
    create_s: float
    metadata_ms: float
    recovery_s: float | None
    stop_s: float | None = None
    restart_s: float | None = None


def produce_one(bootstrap: str, partition: int, timeout: float) -> None:
    """Produce one record to ``partition`` until it is acknowledged or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        producer = ConfluentProducer({"bootstrap.servers": bootstrap, "acks": "1", "message.timeout.ms": 5000})
        failures: list[object] = []
        producer.produce(TOPIC, b"x", partition=partition, on_delivery=lambda err, msg: failures.append(err))
        producer.flush(10)
        if failures and failures[0] is None:
            return
        time.sleep(0.05)
    raise TimeoutError(f"partition {partition} not writable after {timeout}s")


def create_topic(bootstrap: str, partitions: int) -> float:
    start = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.create_topics([NewTopic(TOPIC, partitions, 1)], request_timeout=600, operation_timeout=600)
    future[TOPIC].result(600)
    produce_one(bootstrap, partitions - 1, 600)
    return time.perf_counter() - start


def produce_spread(broker: BrokerProcess, partitions: int, run_records: int, seconds: float) -> ProduceRun:
    """Send for about ``seconds``, ``run_records`` records to a partition before the next, over every partition."""
    producer = ConfluentProducer({
        "bootstrap.servers": broker.bootstrap,
        "acks": "1",
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "queue.buffering.max.kbytes": 65_536,
        "queue.buffering.max.messages": 2_000_000,
        "compression.type": "none",
    })
    payload = os.urandom(RECORD_SIZE)
    acked = [0]
    written: set[int] = set()

    def delivered(err: KafkaException | None, msg: Message) -> None:
        if err is None:
            acked[0] += 1
            written.add(msg.partition())

    start, cpu_start, broker_cpu_start = time.perf_counter(), time.process_time(), cpu_seconds(broker.process.pid)
    deadline = start + seconds
    sent = 0
    while time.perf_counter() < deadline:
        try:
            producer.produce(TOPIC, payload, partition=(sent // run_records) % partitions, on_delivery=delivered)
            sent += 1
        except BufferError:
            producer.poll(0.001)
        if sent % 1000 == 0:
            producer.poll(0)
    producer.flush(300)
    return ProduceRun(
        acked[0], time.perf_counter() - start, len(written), time.process_time() - cpu_start,
        cpu_seconds(broker.process.pid) - broker_cpu_start,
    )


@contextmanager
def broker_with_topic(partitions: int, overrides: dict[str, str]) -> Iterator[tuple[BrokerProcess, float]]:
    """A fresh broker holding the topic, and the seconds its creation took."""
    with tempfile.TemporaryDirectory(prefix="partition-scale-") as tmp:
        broker = BrokerProcess(Path(tmp), overrides={"max.broker.partitions": "100000", **overrides})
        broker.start(timeout=60)
        try:
            yield broker, create_topic(broker.bootstrap, partitions)
        finally:
            broker.stop(timeout=120)


def measure(
    partitions: int, seconds: float, recovery: bool, overrides: dict[str, str], run_records: int = RUN_RECORDS
) -> Row:
    with broker_with_topic(partitions, overrides) as (broker, _):
        round_robin = produce_spread(broker, partitions, 1, seconds)
    with broker_with_topic(partitions, overrides) as (broker, create_s):
        pid = broker.process.pid
        metadata_ms = metadata_latency_ms(broker.bootstrap)
        in_runs = produce_spread(broker, partitions, run_records, seconds)
        fds, rss = open_files(pid), rss_kb(pid) / 1024
        recovery_s = stop_s = restart_s = None
        if recovery:
            broker.kill()
            recovery_s = restart_until_writable(broker, partitions)
            start = time.perf_counter()
            broker.stop(timeout=600)
            stop_s = time.perf_counter() - start
            restart_s = restart_until_writable(broker, partitions)
        return Row(partitions, round_robin, in_runs, fds, rss, create_s, metadata_ms, recovery_s, stop_s, restart_s)


def metadata_latency_ms(bootstrap: str, requests: int = 20) -> float:
    """Median ms of a Metadata request naming the topic, on one connection."""
    wire = RawClient(bootstrap, "partition-scale-bench", timeout=60)
    body = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)])
    latencies = []
    try:
        for _ in range(requests):
            started = time.perf_counter()
            wire.call(ApiKey.METADATA, 12, body)
            latencies.append((time.perf_counter() - started) * 1000)
    finally:
        wire.sock.close()
    return sorted(latencies)[len(latencies) // 2]


def restart_until_writable(broker: BrokerProcess, partitions: int) -> float:
    """Seconds from starting ``broker`` until the first and the last partition take a produce."""
    start = time.perf_counter()
    broker.start(timeout=600)
    produce_one(broker.bootstrap, 0, 600)
    produce_one(broker.bootstrap, partitions - 1, 600)
    return time.perf_counter() - start


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _produce_cells(run: ProduceRun, base: ProduceRun) -> str:
    return (
        f"{run.mb_per_s:.1f} | {run.mb_per_s / base.mb_per_s:.2f} | {run.client_us_per_record:.1f} | "
        f"{run.broker_us_per_record:.1f} | {run.partitions_written:,}"
    )


def table(rows: list[Row], run_records: int = RUN_RECORDS) -> str:
    lines = [
        "| partitions | round-robin MB/s | ratio to first row | client CPU µs/record | broker CPU µs/record "
        f"| partitions written | runs of {run_records} MB/s | ratio to first row | client CPU µs/record "
        "| broker CPU µs/record | partitions written | broker fds | broker RSS MB | create s | Metadata ms "
        "| SIGKILL recovery s | SIGTERM stop s | clean restart s |",
        "|" + "---:|" * 18,
    ]
    for r in rows:
        lines.append(
            f"| {r.partitions:,} | {_produce_cells(r.round_robin, rows[0].round_robin)} | "
            f"{_produce_cells(r.in_runs, rows[0].in_runs)} | {r.fds:,} | {r.rss_mb:.0f} | "
            f"{r.create_s:.1f} | {r.metadata_ms:.1f} | {_seconds(r.recovery_s)} | {_seconds(r.stop_s)} | "
            f"{_seconds(r.restart_s)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", default="1,100,1000,10000", help="comma-separated partition counts")
    parser.add_argument("--seconds", type=float, default=8.0, help="produce run length per row")
    parser.add_argument("--run-records", type=int, default=RUN_RECORDS, help="records per partition in a run")
    parser.add_argument("--no-recovery", action="store_true", help="skip the SIGKILL recovery measurement")
    parser.add_argument("--override", action="append", default=[], help="broker property key=value")
    args = parser.parse_args(argv)
    raise_open_file_limit()
    overrides = dict(item.split("=", 1) for item in args.override)
    rows = []
    for count in (int(p) for p in args.partitions.split(",")):
        row = measure(count, args.seconds, not args.no_recovery, overrides, args.run_records)
        print(f"{count} partitions: {row}", file=sys.stderr, flush=True)
        rows.append(row)
    print(table(rows, args.run_records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
