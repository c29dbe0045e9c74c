"""Spate's main job on the embedded single-broker default.

Starts a broker inside this process, produces a stream of page-view events,
aggregates them into per-minute page counts, writes the aggregates to a second
topic and reads them back. Everything goes over the Kafka protocol through
Spate's own client, as any other application would.

    python -m jobs.quickstart [--events 20000] [--data-dir ./spate-data/quickstart] [--keep-data]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Sequence

from rich.console import Console
from rich.table import Table

from broker_core.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from broker_core.client.errors import KafkaError
from broker_core.protocol.errors import ErrorCode
from broker_core.server.embedded import EmbeddedBroker

EVENTS_TOPIC = "page-views"
COUNTS_TOPIC = "page-views-per-minute"
PARTITIONS = 3
PAGES = ("/", "/pricing", "/docs", "/blog", "/signup", "/login")
WINDOW_MS = 60_000


def page_view_events(count: int, *, now_ms: int, rng: random.Random) -> list[tuple[bytes, bytes, int]]:
    """``(key, value, timestamp)`` of ``count`` events over the last ten minutes, keyed by user."""
    events = []
    for i in range(count):
        timestamp = now_ms - 600_000 + i * 600_000 // count
        user = f"user-{rng.randrange(500)}"
        page = rng.choices(PAGES, weights=(30, 10, 25, 15, 5, 15))[0]
        value = json.dumps({"user": user, "page": page, "ts": timestamp}).encode()
        events.append((user.encode(), value, timestamp))
    return events


def create_topics(bootstrap: str) -> None:
    with Admin(bootstrap) as admin:
        for name in (EVENTS_TOPIC, COUNTS_TOPIC):
            try:
                admin.create_topics([NewTopic(name, num_partitions=PARTITIONS)])
            except KafkaError as exc:
                if exc.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                    raise


def produce(bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes, int]]) -> None:
    with Producer(bootstrap, compression_type="lz4", linger_ms=10) as producer:
        for key, value, timestamp in records:
            producer.send(topic, value, key=key, timestamp=timestamp)
        producer.flush()


def read_all(bootstrap: str, topic: str) -> list:
    """Every record of ``topic`` from the beginning up to its current end."""
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign(partitions)
        end = consumer.end_offsets(partitions)
        records = []
        deadline = time.monotonic() + 60
        while any(consumer.position(tp) < end[tp] for tp in partitions):
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not read {topic} to its end within 60 s")
            records.extend(consumer.poll(timeout_ms=500, max_records=10_000))
        return records


def count_per_minute(records: list) -> Counter:
    counts: Counter = Counter()
    for record in records:
        event = json.loads(record.value)
        counts[(event["ts"] // WINDOW_MS * WINDOW_MS, event["page"])] += 1
    return counts


def run(data_dir: Path, events: int, console: Console) -> Counter:
    started = time.monotonic()
    with EmbeddedBroker(data_dir) as broker:
        bootstrap = broker.bootstrap_servers
        console.print(f"[bold]Spate[/] broker running on {bootstrap} (data in {data_dir})")
        create_topics(bootstrap)
        now_ms = time.time_ns() // 1_000_000
        produce(bootstrap, EVENTS_TOPIC, page_view_events(events, now_ms=now_ms, rng=random.Random(7)))
        console.print(f"produced {events:,} page views to [cyan]{EVENTS_TOPIC}[/]")

        counts = count_per_minute(read_all(bootstrap, EVENTS_TOPIC))
        aggregates = [
            (f"{window}|{page}".encode(), json.dumps({"window_start": window, "page": page, "views": n}).encode(), window)
            for (window, page), n in sorted(counts.items())
        ]
        produce(bootstrap, COUNTS_TOPIC, aggregates)
        results = [json.loads(r.value) for r in read_all(bootstrap, COUNTS_TOPIC)]
    show(console, results, events, time.monotonic() - started)
    return counts


def show(console: Console, results: list[dict], events: int, seconds: float) -> None:
    per_page = Counter()
    for row in results:
        per_page[row["page"]] += row["views"]
    table = Table(title=f"Page views per page, from {len(results)} per-minute aggregates in {COUNTS_TOPIC}")
    table.add_column("page")
    table.add_column("views", justify="right")
    table.add_column("busiest minute (views)", justify="right")
    for page, total in per_page.most_common():
        busiest = max((r for r in results if r["page"] == page), key=lambda r: r["views"])
        minute = time.strftime("%H:%M", time.gmtime(busiest["window_start"] / 1000))
        table.add_row(page, f"{total:,}", f"{minute} UTC ({busiest['views']})")
    console.print(table)
    console.print(f"{events:,} events in, {sum(per_page.values()):,} counted, in {seconds:.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.quickstart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="page views to produce (default 20000)")
    parser.add_argument("--data-dir", type=Path, default=Path("spate-data/quickstart"),
                        help="where the embedded broker keeps its logs (default ./spate-data/quickstart)")
    parser.add_argument("--keep-data", action="store_true",
                        help="keep what earlier runs left in the data dir (default: start empty)")
    args = parser.parse_args(argv)
    if args.events <= 0:
        parser.error(f"--events must be positive, not {args.events}")
    if not args.keep_data:
        shutil.rmtree(args.data_dir, ignore_errors=True)
    console = Console()
    counts = run(args.data_dir, args.events, console)
    return 0 if sum(counts.values()) >= args.events else 1


if __name__ == "__main__":
    sys.exit(main())
