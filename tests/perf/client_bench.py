"""Spate's own client next to confluent-kafka: producer records/s and end-to-end latency, same broker, same run.

    .venv/bin/python -m tests.perf.client_bench [--records 300000] [--rounds 3] [--e2e-records 20000] [--profile]

Starts one Spate broker process and, in each round:

* measures end-to-end latency at 10,000 records/s of 1 KB on a 1-partition
  topic with ``spate perf end-to-end`` and with the same paced loop written
  with confluent-kafka (no linger, acks=1, a fetch may wait at the broker);
* produces ``--records`` 1 KB records (acks=1, linger 5 ms, 1 MB batches,
  3 partitions) with confluent-kafka, then with Spate's ``Producer`` in the
  same loop (``send`` per record, ``flush`` at the end, no callbacks), then
  with ``spate perf produce`` (which also times a sample of the records),
  each on a fresh topic deleted after the run.

Prints a Markdown table with every round and the median; the machine is
shared, so compare within a round. ``--profile`` adds the top entries of a
profile of Spate's producer threads (``send`` on the caller's thread, the
sender thread) over one more produce run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spate.client import Producer
from spate.client.producer.sender import Sender
from tests.perf.test_broker_perf import produce as confluent_produce
from tests.support.broker_process import BrokerProcess

RECORD_SIZE = 1024
PRODUCE_PARTITIONS = 3
E2E_RATE = 10_000
_SEND_TIME = struct.Struct(">q")
_PERCENTILES = re.compile(r"([\d.]+) ms 50th, [\d.]+ ms 95th, ([\d.]+) ms 99th")
_RATE = re.compile(r"records \w+, ([\d.]+) records/sec")


def create_topic(bootstrap: str, name: str, partitions: int) -> str:
    """A topic whose files go as soon as it is deleted (see ``delete_topic``)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = NewTopic(name, partitions, 1, config={"file.delete.delay.ms": "0"})
    admin.create_topics([topic])[name].result(30)
    return name


def delete_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.delete_topics([name])[name].result(30)
    # Let the broker remove the files before the next run. Their memory (page cache) is then
    # reused: on this class of VM, writing into never-used memory costs about eight times as
    # much kernel time once a gigabyte or so has been touched, which would otherwise slow
    # whichever client happens to run later.
    time.sleep(1)


def spate_produce(bootstrap: str, topic: str, records: int) -> float:
    """Records/s of Spate's producer in confluent's loop: same acks, linger and batch size.

    buffer_memory stays at its default (32 MB, Kafka's): a larger buffer only
    lets the backlog grow, into freshly faulted-in memory.
    """
    producer = Producer(bootstrap, acks=1, linger_ms=5, batch_size=1_000_000, client_id="client-bench")
    try:
        producer.partitions_for(topic)
        payload = os.urandom(RECORD_SIZE)
        send = producer.send
        start = time.perf_counter()
        for _ in range(records):
            send(topic, payload)
        producer.flush(120)
        return records / (time.perf_counter() - start)
    finally:
        producer.close()


def spate_cli(*args: str) -> str:
    """The summary line of a ``spate perf`` command."""
    done = subprocess.run([sys.executable, "-m", "spate.cli.main", "perf", *args],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"spate perf {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


def spate_perf_produce(bootstrap: str, topic: str, records: int) -> float:
    line = spate_cli("produce", "--topic", topic, "--records", str(records), "--record-size", str(RECORD_SIZE),
                     "--acks", "1", "--batch-size", "1000000", "--bootstrap-server", bootstrap)
    return float(_RATE.search(line).group(1))  # type: ignore[union-attr]


def spate_end_to_end(bootstrap: str, topic: str, records: int) -> tuple[float, float]:
    line = spate_cli("end-to-end", "--topic", topic, "--records", str(records), "--throughput", str(E2E_RATE),
                     "--record-size", str(RECORD_SIZE), "--bootstrap-server", bootstrap)
    p50, p99 = _PERCENTILES.search(line).groups()  # type: ignore[union-attr]
    return float(p50), float(p99)


def confluent_end_to_end(bootstrap: str, topic: str, records: int, *, acks: str = "1") -> tuple[float, float]:
    """p50 and p99 (ms) of the same paced produce-and-poll loop, written with confluent-kafka."""
    producer = ConfluentProducer({"bootstrap.servers": bootstrap, "acks": acks, "linger.ms": 0})
    consumer = ConfluentConsumer({"bootstrap.servers": bootstrap, "group.id": "client-bench",
                                  "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    try:
        _, high = consumer.get_watermark_offsets(ConfluentTopicPartition(topic, 0), timeout=30)
        consumer.assign([ConfluentTopicPartition(topic, 0, high)])
        # librdkafka brings up its connections and fetcher in the background: one untimed
        # round trip first, as Spate's tool resolves metadata and position before timing.
        producer.produce(topic, b"warm-up")
        producer.flush(30)
        if consumer.poll(30) is None:
            raise RuntimeError("confluent-kafka consumer did not receive the warm-up record")
        padding = os.urandom(RECORD_SIZE - _SEND_TIME.size)
        latencies: list[float] = []
        sent = 0
        start = time.perf_counter()
        deadline = start + 120
        while len(latencies) < records and time.perf_counter() < deadline:
            due = min(records, int((time.perf_counter() - start) * E2E_RATE) + 1)
            while sent < due:
                producer.produce(topic, _SEND_TIME.pack(time.perf_counter_ns()) + padding)
                sent += 1
            producer.poll(0)
            first = consumer.poll(0.005)
            if first is None:
                continue
            arrived = time.perf_counter_ns()
            for message in [first, *consumer.consume(500, 0)]:
                if message.error() is None:
                    latencies.append((arrived - _SEND_TIME.unpack_from(message.value())[0]) / 1e6)
        latencies.sort()
        return latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    finally:
        producer.flush(10)
        consumer.close()


def profile_spate_produce(bootstrap: str, topic: str, records: int, top: int = 12) -> str:
    """The top ``top`` functions by own time on the producing thread and on the sender thread."""
    profiles = {"caller thread (send)": cProfile.Profile(), "sender thread": cProfile.Profile()}
    original_run = Sender.run

    def profiled_run(sender: Sender) -> None:
        profiles["sender thread"].enable()
        try:
            original_run(sender)
        finally:
            profiles["sender thread"].disable()

    Sender.run = profiled_run  # type: ignore[method-assign]
    try:
        profiles["caller thread (send)"].enable()
        spate_produce(bootstrap, topic, records)
        profiles["caller thread (send)"].disable()
    finally:
        Sender.run = original_run  # type: ignore[method-assign]
    out = []
    for name, profile in profiles.items():
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(top)
        table = text.getvalue()
        out.append(f"--- {name} ---\n{table[table.find('ncalls'):].rstrip()}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300_000, help="1 KB records per produce run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--e2e-records", type=int, default=20_000)
    parser.add_argument("--profile", action="store_true", help="also profile one run of Spate's producer")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(dir=repo, prefix=".perf-") as scratch:
        broker = BrokerProcess(Path(scratch) / "spate", overrides={"log.segment.bytes": str(512 * 1024**2)}).start()
        try:
            bootstrap = broker.bootstrap
            for round_index in range(args.rounds):
                # Latency first, on a quiet broker; then each produce run on a topic of its
                # own, deleted afterwards so that no run pays for the previous one's page
                # cache write-back.
                e2e_topic = create_topic(bootstrap, f"client-bench-e2e-{round_index}", 1)
                p50, p99 = spate_end_to_end(bootstrap, e2e_topic, args.e2e_records)
                add("spate perf end-to-end, p50 ms", p50)
                add("spate perf end-to-end, p99 ms", p99)
                p50, p99 = confluent_end_to_end(bootstrap, e2e_topic, args.e2e_records)
                add("confluent-kafka end-to-end, p50 ms", p50)
                add("confluent-kafka end-to-end, p99 ms", p99)
                delete_topic(bootstrap, e2e_topic)
                rates = {}
                for name, run in (("confluent", lambda t: args.records / confluent_produce(bootstrap, t, args.records)),
                                  ("spate", lambda t: spate_produce(bootstrap, t, args.records)),
                                  ("tool", lambda t: spate_perf_produce(bootstrap, t, args.records))):
                    topic = create_topic(bootstrap, f"client-bench-{name}-{round_index}", PRODUCE_PARTITIONS)
                    rates[name] = run(topic)
                    delete_topic(bootstrap, topic)
                add("confluent-kafka producer, records/s", rates["confluent"])
                add("Spate Producer, same loop, records/s", rates["spate"])
                add("Spate Producer / confluent-kafka", rates["spate"] / rates["confluent"])
                add("spate perf produce, records/s", rates["tool"])
                add("spate perf produce / confluent-kafka", rates["tool"] / rates["confluent"])
                print(f"round {round_index + 1} of {args.rounds} done", file=sys.stderr, flush=True)
            profile = (profile_spate_produce(bootstrap, create_topic(bootstrap, "client-bench-profile", 3),
                                             args.records) if args.profile else "")
        finally:
            broker.stop()

    header = " | ".join(f"round {i + 1}" for i in range(args.rounds))
    print(f"\n| measure | {header} | median |")
    print("|---|" + "---|" * (args.rounds + 1))
    for name, values in rows.items():
        exact = "ms" in name or "/" in name
        cells = " | ".join(_fmt(v, exact) for v in values)
        print(f"| {name} | {cells} | {_fmt(statistics.median(values), exact)} |")
    if profile:
        print("\nProfile of Spate's producer (one run, profiler overhead included):\n")
        print(profile)


def _fmt(value: float, exact: bool) -> str:
    return f"{value:.2f}" if exact else f"{value:,.0f}"


if __name__ == "__main__":
    main()
