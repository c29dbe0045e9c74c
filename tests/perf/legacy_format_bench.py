"""What the legacy message formats cost the broker: current clients against clients of magic 0, same run.

    .venv/bin/python -m tests.perf.legacy_format_bench [--records 1000000] [--record-size 100] [--rounds 3]

One ``spate broker start`` process; confluent-kafka (librdkafka) on both
sides, once as it is (Produce v9+, Fetch v12+: RecordBatch v2, which the
broker appends and serves as file ranges) and once told to speak as to a
Kafka 0.9 broker (``api.version.request=false``,
``broker.version.fallback=0.9.0.0``: Produce v1 and Fetch v1 with message
sets of magic 0, which the broker converts both ways). For each codec
(``--codecs``, default none and lz4) and each round:

* produce ``--records`` records of ``--record-size`` bytes to a topic of one
  partition (acks=1, linger.ms=5), current and legacy in turn, each to its
  own topic;
* consume them from the start with a fresh consumer (assign, no group;
  ``fetch.queue.backoff.ms=10``, see ``consume``).

Each row gives records/s on the client side and the broker process's CPU
per record (``/proc/PID/stat`` before and after); the medians over the
rounds and the ratio legacy / current. Client and broker share the
machine's cores: compare rows of one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.perf.measurements import cpu_seconds
from tests.support.broker_process import BrokerProcess

LEGACY = {"api.version.request": False, "broker.version.fallback": "0.9.0.0"}
TIMEOUT_S = 600


@dataclass
class Sample:
    rate: float  # records/s seen by the client
    broker_us: float  # broker CPU microseconds per record


def create_topic(bootstrap: str, name: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)


def produce(broker: BrokerProcess, topic: str, records: int, size: int, codec: str, legacy: bool) -> Sample:
    config = {"bootstrap.servers": broker.bootstrap, "linger.ms": 5, "acks": 1, "compression.codec": codec,
              "queue.buffering.max.messages": 1_000_000, **(LEGACY | {"enable.idempotence": False} if legacy else {})}
    producer = Producer(config)
    value = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    before, started = cpu_seconds(broker.process.pid), time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    if producer.flush(TIMEOUT_S) != 0:
        raise RuntimeError(f"{topic}: records left unacknowledged")
    elapsed = time.perf_counter() - started
    return Sample(records / elapsed, (cpu_seconds(broker.process.pid) - before) * 1e6 / records)


def consume(broker: BrokerProcess, topic: str, records: int, legacy: bool) -> Sample:
    # librdkafka postpones a partition's next fetch by fetch.queue.backoff.ms (1 s) once its local queue is
    # full; a reader faster than that would measure the pause, not the broker.
    config = {"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-bench", "enable.auto.commit": False,
              "fetch.queue.backoff.ms": 10, **({k: str(v).lower() for k, v in LEGACY.items()} if legacy else {})}
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, 0, 0)])
    read, before, started = 0, cpu_seconds(broker.process.pid), time.perf_counter()
    try:
        while read < records:
            for message in consumer.consume(10_000, 1.0):
                if message.error() is None:
                    read += 1
            if time.perf_counter() - started > TIMEOUT_S:
                raise TimeoutError(f"{topic}: read {read} of {records} records")
    finally:
        consumer.close()
    elapsed = time.perf_counter() - started
    return Sample(read / elapsed, (cpu_seconds(broker.process.pid) - before) * 1e6 / read)


def row(name: str, current: list[Sample], legacy: list[Sample]) -> str:
    c_rate, l_rate = (statistics.median(s.rate for s in samples) for samples in (current, legacy))
    c_us, l_us = (statistics.median(s.broker_us for s in samples) for samples in (current, legacy))
    cpu_ratio = f"{l_us / c_us:.2f}" if c_us > 0 else "n/a (too few records to time)"
    return f"| {name} | {c_rate:,.0f} | {l_rate:,.0f} | {l_rate / c_rate:.2f} | {c_us:.2f} | {l_us:.2f} | {cpu_ratio} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--codecs", default="none,lz4")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    lines = ["| operation | current records/s | legacy records/s | legacy / current | current broker µs/record "
             "| legacy broker µs/record | legacy / current |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="legacy-format-") as tmp:
        broker = BrokerProcess(Path(tmp))
        broker.start(timeout=60)
        try:
            for codec in args.codecs.split(","):
                samples: dict[tuple[str, bool], list[Sample]] = {}
                for round_ in range(args.rounds):
                    for legacy in (False, True):
                        topic = f"legacy-{codec}-{round_}-{'old' if legacy else 'new'}"
                        create_topic(broker.bootstrap, topic)
                        samples.setdefault(("produce", legacy), []).append(
                            produce(broker, topic, args.records, args.record_size, codec, legacy))
                        samples.setdefault(("consume", legacy), []).append(
                            consume(broker, topic, args.records, legacy))
                        print(f"{codec} round {round_ + 1} {'legacy' if legacy else 'current'} done",
                              file=sys.stderr, flush=True)
                for operation in ("produce", "consume"):
                    lines.append(row(f"{operation}, {args.record_size} B, {codec}", samples[(operation, False)],
                                     samples[(operation, True)]))
        finally:
            broker.stop(timeout=60)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
