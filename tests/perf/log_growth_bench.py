"""Produce and fetch cost as one partition's log grows: sparse indexes mean no cost grows with the log.

    .venv/bin/python -m tests.perf.log_growth_bench [--gb 20] [--step-gb 1] [--plot growth.png]

One ``spate broker start`` process (default segment size, 1 GiB) and one
single-partition topic. The log grows by ``--step-gb`` at a time, written by
confluent-kafka (1 KB records, acks=1, linger.ms=5); after each step, on one
raw connection (Spate's codec):

* produce: MB/s of that step's writes;
* fetch: 200 Fetch requests (v12, 64 KB, no wait) at offsets drawn uniformly
  over the whole log, answered through the offset index of whichever
  segment holds the offset: p50 and p99 ms;
* by time: 100 ListOffsets by timestamps drawn over the log's time span,
  answered through the time indexes: p50 ms.

The table's ratio column compares each step's produce rate and fetch p50 with
the first step's: flat cost means ratios near 1. ``--plot`` draws both
against the log's size (needs matplotlib). The log lives in a temporary
directory removed at the end; it needs ``--gb`` of free disk.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from spate.cli.perf_stats import percentile
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.raw_client import RawClient

TOPIC = "growing"
RECORD = b"r" * 1024
GB = 1 << 30
FETCHES = 200
TIME_LOOKUPS = 100


@dataclass
class Step:
    size_gb: float
    produce_mb_s: float
    fetch_p50_ms: float
    fetch_p99_ms: float
    by_time_p50_ms: float


def timed_call(wire: RawClient, api_key: ApiKey, version: int, body: Any) -> tuple[Any, float]:
    """The answer and its latency in ms."""
    started = time.perf_counter()
    answer = wire.call(api_key, version, body)
    return answer, (time.perf_counter() - started) * 1000


def produce_bytes(bootstrap: str, count: int) -> float:
    """Write ``count`` bytes of 1 KB records; MB/s."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5,
                         "batch.size": 1 << 20, "queue.buffering.max.kbytes": 1 << 20})
    failed: list[str] = []

    def delivered(error, _message) -> None:
        if error is not None:
            failed.append(str(error))

    started = time.perf_counter()
    for _ in range(count // len(RECORD)):
        while True:
            try:
                producer.produce(TOPIC, RECORD, on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(120) or failed:
        raise RuntimeError(f"produce failed: {failed[:3]}")
    return count / (1 << 20) / (time.perf_counter() - started)


def fetch_latencies(wire: RawClient, end_offset: int, rng: random.Random) -> list[float]:
    Q = FetchRequest
    latencies = []
    for _ in range(FETCHES):
        partition = Q.FetchPartition(partition=0, fetch_offset=rng.randrange(end_offset), partition_max_bytes=65536)
        body = Q(max_wait_ms=0, min_bytes=1, topics=[Q.FetchTopic(topic=TOPIC, partitions=[partition])])
        answer, ms = timed_call(wire, ApiKey.FETCH, 12, body)
        data = answer.responses[0].partitions[0]
        if data.error_code or not data.records:
            raise RuntimeError(f"fetch failed: error {data.error_code}, {len(data.records or b'')} bytes")
        latencies.append(ms)
    return latencies


def by_time_latencies(wire: RawClient, first_ms: int, last_ms: int, rng: random.Random) -> list[float]:
    Q = ListOffsetsRequest
    latencies = []
    for _ in range(TIME_LOOKUPS):
        partition = Q.ListOffsetsPartition(partition_index=0, timestamp=rng.randint(first_ms, last_ms))
        answer, ms = timed_call(wire, ApiKey.LIST_OFFSETS, 7, Q(topics=[Q.ListOffsetsTopic(name=TOPIC,
                                                                                     partitions=[partition])]))
        if answer.topics[0].partitions[0].error_code:
            raise RuntimeError(f"ListOffsets failed: error {answer.topics[0].partitions[0].error_code}")
        latencies.append(ms)
    return latencies


def end_offset(wire: RawClient) -> int:
    Q = ListOffsetsRequest
    answer, _ = timed_call(wire, ApiKey.LIST_OFFSETS, 7, Q(topics=[Q.ListOffsetsTopic(
        name=TOPIC, partitions=[Q.ListOffsetsPartition(partition_index=0, timestamp=-1)])]))
    return answer.topics[0].partitions[0].offset


def grow(total_gb: float, step_gb: float) -> list[Step]:
    rng = random.Random(7)
    steps = []
    with tempfile.TemporaryDirectory(prefix="log-growth-") as scratch:
        with running_broker(BrokerProcess(Path(scratch))) as broker:
            create_topic(broker.bootstrap, TOPIC, partitions=1)
            wire = RawClient(broker.bootstrap, "log-growth-bench", timeout=60)
            first_ms = int(time.time() * 1000)
            written, step_bytes = 0, int(step_gb * GB)
            for _ in range(max(1, round(total_gb / step_gb))):
                rate = produce_bytes(broker.bootstrap, step_bytes)
                written += step_bytes
                fetches = sorted(fetch_latencies(wire, end_offset(wire), rng))
                lookups = sorted(by_time_latencies(wire, first_ms, int(time.time() * 1000), rng))
                steps.append(Step(written / GB, rate, percentile(fetches, 0.5), percentile(fetches, 0.99),
                                  percentile(lookups, 0.5)))
                print(f"{written / GB:.1f} GB: {rate:.0f} MB/s, fetch p50 {steps[-1].fetch_p50_ms:.2f} ms",
                      flush=True)
    return steps


def table(steps: list[Step]) -> str:
    first = steps[0]
    lines = ["| log GB | produce MB/s | produce ratio | fetch p50 ms | fetch p99 ms | fetch p50 ratio "
             "| by-time p50 ms |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for s in steps:
        lines.append(f"| {s.size_gb:.1f} | {s.produce_mb_s:.0f} | {s.produce_mb_s / first.produce_mb_s:.2f} "
                     f"| {s.fetch_p50_ms:.2f} | {s.fetch_p99_ms:.2f} | {s.fetch_p50_ms / first.fetch_p50_ms:.2f} "
                     f"| {s.by_time_p50_ms:.2f} |")
    return "\n".join(lines)


def plot(steps: list[Step], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [s.size_gb for s in steps]
    figure, produce_axis = plt.subplots(figsize=(7, 4))
    produce_axis.plot(sizes, [s.produce_mb_s for s in steps], "o-", color="tab:blue", label="produce MB/s")
    produce_axis.set_xlabel("log size (GB)")
    produce_axis.set_ylabel("produce MB/s")
    produce_axis.set_ylim(bottom=0)
    fetch_axis = produce_axis.twinx()
    fetch_axis.plot(sizes, [s.fetch_p50_ms for s in steps], "s-", color="tab:orange", label="fetch p50 ms")
    fetch_axis.plot(sizes, [s.by_time_p50_ms for s in steps], "^-", color="tab:green", label="by-time p50 ms")
    fetch_axis.set_ylabel("ms")
    fetch_axis.set_ylim(bottom=0)
    figure.legend(loc="lower right")
    figure.suptitle("One partition's log growing: produce and fetch cost")
    figure.tight_layout()
    figure.savefig(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=20.0, help="final log size in GiB")
    parser.add_argument("--step-gb", type=float, default=1.0, help="growth between measurements")
    parser.add_argument("--plot", type=Path, help="draw the figures into this image")
    args = parser.parse_args(argv)
    steps = grow(args.gb, args.step_gb)
    print(table(steps), flush=True)
    if args.plot:
        plot(steps, args.plot)
        print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
