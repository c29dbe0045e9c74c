"""What the broker's metrics cost the produce path: records/s with ``metrics.http.listener`` off and on.

    .venv/bin/python -m tests.perf.metrics_overhead_bench [--records 200000] [--rounds 3]

Starts two broker processes, one without metrics and one with them (scraped
every ``--scrape-interval`` seconds while it works, 15 by default as
Prometheus does), and in each round
produces the same records to each in turn with confluent-kafka, on a fresh
3-partition topic, in two shapes:

* ``batched``: 1 KB records, acks=1, linger 5 ms (few large Produce requests);
* ``small requests``: 100-byte records, acks=1, linger 0 and 16 KB batches
  (many small requests: the per-request cost of the timing shows most here);
* ``fixed requests``: the same Produce request (one batch of 20 records of
  100 bytes, acks=1) sent ``--records / 20`` times over one connection, 32 in
  flight, by a raw protocol client: every run makes exactly the same
  requests, whatever the client's speed.

First it times, in this process, what metrics add to one request (the
timed response future, its stamps, the phase histograms and a Produce's
topic counters) against a plain future. Then two figures per run: records/s as the producer saw them (bound by the
client's own loop as much as by the broker), and records per second of
broker CPU time (user + system, from ``/proc``), which is what the metrics
cost. Prints a Markdown table with every round, the medians and the ratios
on/off (1.0 = no cost); the machine is shared, so the rounds alternate the
brokers.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import threading
import time
import timeit
import urllib.request
from pathlib import Path

from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.perf.measurements import cpu_seconds
from tests.support.broker_process import BrokerProcess
from tests.support.ports import free_port

SHAPES = {
    "batched": ({"linger.ms": 5, "batch.size": 1_000_000, "acks": 1}, 1024),
    "small requests": ({"linger.ms": 0, "batch.size": 16_384, "acks": 1}, 100),
}


FIXED_RECORDS_PER_REQUEST = 20
FIXED_IN_FLIGHT = 32


def produce_fixed(broker: BrokerProcess, topic: str, records: int) -> tuple[float, float]:
    """(records/s, records per broker CPU second) sending identical Produce requests, pipelined."""
    from spate.protocol.api_keys import ApiKey
    from spate.protocol.connection import ClientConnection
    from spate.protocol.messages.produce import ProduceRequest as Q
    from spate.records import Record, build_batch
    from tests.support.admin_requests import create_topic

    create_topic(broker.bootstrap, topic, partitions=1)
    batch = build_batch([Record(i, 1_700_000_000_000, None, b"x" * 100) for i in range(FIXED_RECORDS_PER_REQUEST)])
    body = Q(acks=1, timeout_ms=5000, topic_data=[
        Q.TopicProduceData(name=topic, partition_data=[Q.PartitionProduceData(index=0, records=batch)])])
    requests = records // FIXED_RECORDS_PER_REQUEST
    connection = ClientConnection("metrics-bench")
    with socket.create_connection(("127.0.0.1", broker.port)) as sock:
        cpu_before = cpu_seconds(broker.process.pid)
        started = time.perf_counter()
        sent = answered = 0
        while answered < requests:
            while sent < requests and sent - answered < FIXED_IN_FLIGHT:
                sock.sendall(connection.send_request(ApiKey.PRODUCE, 7, body)[1])
                sent += 1
            data = sock.recv(1 << 16)
            assert data, "the broker closed the connection"
            connection.receive_data(data)
            while connection.next_response() is not None:
                answered += 1
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(broker.process.pid) - cpu_before
    return requests * FIXED_RECORDS_PER_REQUEST / elapsed, requests * FIXED_RECORDS_PER_REQUEST / cpu


def produce(broker: BrokerProcess, topic: str, records: int, settings: dict, size: int) -> tuple[float, float]:
    """(records/s, records per broker CPU second) of producing ``records`` values of ``size`` bytes to a new
    3-partition ``topic``."""
    bootstrap = broker.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    producer = ConfluentProducer({"bootstrap.servers": bootstrap, "queue.buffering.max.messages": 1_000_000,
                                  **settings})
    value = b"x" * size
    cpu_before = cpu_seconds(broker.process.pid)
    started = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % 3)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(120) == 0
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds(broker.process.pid) - cpu_before
    admin.delete_topics([topic])[topic].result(30)
    return records / elapsed, records / cpu


class Scraper(threading.Thread):
    """Scrapes ``url`` every ``interval_s``, as Prometheus would, until stopped."""

    def __init__(self, url: str, interval_s: float) -> None:
        super().__init__(daemon=True)
        self.url, self.interval_s, self.stopped, self.scrapes = url, interval_s, threading.Event(), 0

    def run(self) -> None:
        while not self.stopped.wait(self.interval_s):
            with urllib.request.urlopen(self.url, timeout=10) as response:
                response.read()
            self.scrapes += 1


def request_overhead_us() -> tuple[float, float]:
    """(µs per request with the metrics path, µs without): the best of several timings."""
    import asyncio
    from types import SimpleNamespace

    from broker_core.metrics.request_metrics import RequestMetrics
    from broker_core.metrics.request_timing import TimedResponse, clock, record_request
    from broker_core.metrics.topic_metrics import BrokerTopicMetrics
    from spate.protocol.api_keys import ApiKey

    loop = asyncio.new_event_loop()
    requests, topics = RequestMetrics(), BrokerTopicMetrics()
    request = SimpleNamespace(api_key=ApiKey.PRODUCE, body=SimpleNamespace(acks=1))
    body = SimpleNamespace(throttle_time_ms=0)

    def with_metrics() -> None:
        future = TimedResponse(loop=loop)
        future.mark_taken()
        future.mark_returned(answered=True)
        future.set_result(body)
        record_request(requests, request, future, body, clock())
        topics.record_produce("topic", 10, 1000)

    def without() -> None:
        future = loop.create_future()
        future.set_result(body)
        clock()

    runs = 100_000
    try:
        return tuple(min(timeit.repeat(fn, number=runs, repeat=7)) / runs * 1e6 for fn in (with_metrics, without))
    finally:
        loop.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scrape-interval", type=float, default=15.0, metavar="S",
                        help="seconds between scrapes of the metrics broker (Prometheus's default: 15)")
    args = parser.parse_args()
    with_us, without_us = request_overhead_us()
    print(f"per request: {with_us:.2f} µs with metrics, {without_us:.2f} µs without: {with_us - without_us:.2f} µs "
          "added")
    with tempfile.TemporaryDirectory(prefix="spate-metrics-bench-") as tmp:
        metrics_port = free_port()
        off = BrokerProcess(Path(tmp) / "off").start()
        on = BrokerProcess(Path(tmp) / "on", overrides={
            "metrics.http.listener": f"http://127.0.0.1:{metrics_port}"}).start()
        scraper = Scraper(f"http://127.0.0.1:{metrics_port}/metrics", args.scrape_interval)
        scraper.start()
        try:
            results = run_rounds(off, on, args.records, args.rounds)
        finally:
            scraper.stopped.set()
            off.stop()
            on.stop()
    print_table(results, args.records, scraper.scrapes)


Figures = tuple[tuple[float, float], tuple[float, float]]  # (off, on), each (records/s, records per CPU s)


def run_rounds(off: BrokerProcess, on: BrokerProcess, records: int, rounds: int) -> dict[str, list[Figures]]:
    results: dict[str, list[Figures]] = {shape: [] for shape in SHAPES}
    for round_index in range(rounds):
        for shape, (settings, size) in SHAPES.items():
            order = (off, on) if round_index % 2 == 0 else (on, off)
            rates = {}
            for broker in order:
                topic = f"bench-{round_index}-{shape.replace(' ', '-')}-{'on' if broker is on else 'off'}"
                rates[broker is on] = produce(broker, topic, records, settings, size)
            results[shape].append((rates[False], rates[True]))
        rates = {}
        for broker in ((off, on) if round_index % 2 == 0 else (on, off)):
            rates[broker is on] = produce_fixed(broker, f"bench-{round_index}-fixed-{'on' if broker is on else 'off'}",
                                                records)
        results.setdefault("fixed requests", []).append((rates[False], rates[True]))
    return results


def print_table(results: dict[str, list[Figures]], records: int, scrapes: int) -> None:
    print(f"\n{records} records per run; the metrics broker was scraped {scrapes} times\n")
    print("| shape | round | off: records/s | on: records/s | on/off | off: records per broker CPU s "
          "| on: records per broker CPU s | on/off |")
    print("|---|---|---|---|---|---|---|---|")
    for shape, rows in results.items():
        for index, (off, on) in enumerate(rows, 1):
            print(_row(shape, str(index), off, on))
        median_off = tuple(statistics.median(r[0][k] for r in rows) for k in (0, 1))
        median_on = tuple(statistics.median(r[1][k] for r in rows) for k in (0, 1))
        print(_row(shape, "median", median_off, median_on))
        paired = [statistics.median(r[1][k] / r[0][k] for r in rows) for k in (0, 1)]
        print(f"| {shape} | median of the rounds' ratios | | | {paired[0]:.3f} | | | {paired[1]:.3f} |")


def _row(shape: str, label: str, off: tuple[float, float], on: tuple[float, float]) -> str:
    return (f"| {shape} | {label} | {off[0]:,.0f} | {on[0]:,.0f} | {on[0] / off[0]:.3f} "
            f"| {off[1]:,.0f} | {on[1]:,.0f} | {on[1] / off[1]:.3f} |")


if __name__ == "__main__":
    main()
