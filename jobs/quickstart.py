"""Spate's main job, on the embedded single-broker default or on a running cluster.

Starts a broker inside this process (or, with ``--bootstrap-server``, uses
the brokers of a running cluster, e.g. one ``spate cluster up`` started),
produces a stream of page-view events,
then runs a Spark Structured Streaming query (``jobs/page_views.py``) that
reads the events topic with ``format("spate")``, counts views per page and
minute, and writes the counts to a second topic exactly once, in Kafka
transactions. Finally it reads the counts back as a DataFrame, at
read_committed, and prints them.

    python -m jobs.quickstart [--events 20000] [--data-dir ./spate-data/quickstart] [--keep-data]
                              [--bootstrap-server HOST:PORT[,...]]
"""

from __future__ import annotations

import argparse
import contextlib
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

from broker_core.server.embedded import EmbeddedBroker
from jobs.page_views import start_query
from spate.client import Admin, NewTopic, Producer
from spate.client.errors import KafkaError
from spate.protocol.errors import ErrorCode

EVENTS_TOPIC = "page-views"
COUNTS_TOPIC = "page-views-per-minute"
PARTITIONS = 3
PAGES = ("/", "/pricing", "/docs", "/blog", "/signup", "/login")
WINDOW_MS = 60_000
MICRO_BATCHES = 4


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


def create_topics(bootstrap: str, *, fresh: bool = False) -> None:
    """The job's two topics; ``fresh`` deletes what an earlier run left in them first."""
    with Admin(bootstrap) as admin:
        if fresh:
            existing = [name for name in (EVENTS_TOPIC, COUNTS_TOPIC) if name in admin.list_topics()]
            if existing:
                admin.delete_topics(existing)
                _wait_until_gone(admin, existing)
        for name in (EVENTS_TOPIC, COUNTS_TOPIC):
            try:
                admin.create_topics([NewTopic(name, num_partitions=PARTITIONS)])
            except KafkaError as exc:
                if exc.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                    raise


def _wait_until_gone(admin: Admin, names: list[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while any(name in admin.list_topics() for name in names):
        if time.monotonic() > deadline:
            raise RuntimeError(f"topics {names} were not deleted within {timeout_s:.0f} s")
        time.sleep(0.2)


def produce(bootstrap: str, topic: str, records: Sequence[tuple[bytes, bytes, int]]) -> None:
    with Producer(bootstrap, compression_type="lz4", linger_ms=10) as producer:
        for key, value, timestamp in records:
            producer.send(topic, value, key=key, timestamp=timestamp)
        producer.flush()


def spark_session():
    """The active session (inside a Spark application or a test run), else a local, quiet one."""
    from pyspark.sql import SparkSession

    from spark_ext.session import spate_session

    if SparkSession.getActiveSession() is not None:
        return SparkSession.getActiveSession(), False
    return spate_session("spate-quickstart"), True


def latest_counts(spark, bootstrap: str) -> list[dict]:
    """The last committed count of every (minute, page), read back as a DataFrame."""
    from pyspark.sql import functions as F

    counts = (
        spark.read.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("subscribe", COUNTS_TOPIC)
        .option("isolation.level", "read_committed")
        .load()
        .groupBy("key")
        .agg(F.max_by("value", F.struct("timestamp", "offset")).alias("value"))
    )
    return [json.loads(row.value) for row in counts.collect()]


def run(data_dir: Path, events: int, console: Console, *, bootstrap: str | None = None, fresh: bool = False) -> Counter:
    """Run the job against ``bootstrap``, or against a broker started here when it is None.

    ``fresh`` empties the job's topics first (a cluster keeps them between runs).
    """
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        embedded = None
        if bootstrap is None:
            embedded = stack.enter_context(EmbeddedBroker(data_dir))
            bootstrap = embedded.bootstrap_servers
            console.print(f"[bold]Spate[/] broker running on {bootstrap} (data in {data_dir})")
        else:
            console.print(f"[bold]Spate[/] cluster at {bootstrap} (checkpoints in {data_dir})")
        create_topics(bootstrap, fresh=fresh)
        now_ms = time.time_ns() // 1_000_000
        produce(bootstrap, EVENTS_TOPIC, page_view_events(events, now_ms=now_ms, rng=random.Random(7)))
        console.print(f"produced {events:,} page views to [cyan]{EVENTS_TOPIC}[/]")

        spark, owned = spark_session()
        try:
            query = start_query(
                spark,
                bootstrap=bootstrap,
                events_topic=EVENTS_TOPIC,
                counts_topic=COUNTS_TOPIC,
                checkpoint=str(data_dir / "checkpoints" / "page-views"),
                available_now=True,
                max_offsets_per_trigger=max(1, events // MICRO_BATCHES),
            )
            query.awaitTermination()
            if query.exception() is not None:
                raise RuntimeError(f"the streaming query failed: {query.exception()}")
            console.print(f"Spark streaming query processed {EVENTS_TOPIC} in {len(query.recentProgress)} "
                          f"micro-batch(es) into [cyan]{COUNTS_TOPIC}[/]")
            results = latest_counts(spark, bootstrap)
        finally:
            if owned:
                spark.stop()
    show(console, results, events, time.monotonic() - started)
    show_next_steps(console, bootstrap if embedded is None else None)
    return Counter({(r["window_start"], r["page"]): r["views"] for r in results})


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


def show_next_steps(console: Console, cluster_bootstrap: str | None) -> None:
    """Where to look next: the console and metrics of a cluster that outlives this run."""
    console.print("\n[bold]Next[/]")
    if cluster_bootstrap is None:
        console.print("  a cluster with metrics:  spate cluster up --monitoring --data-dir ./spate-data/cluster")
        console.print("  this job on it:          python -m jobs.quickstart --bootstrap-server 127.0.0.1:9092")
        cluster_bootstrap = "127.0.0.1:9092"
    console.print(f"  browse topics and lag:   spate console --bootstrap-server {cluster_bootstrap}")
    console.print(f"  the consumer groups:     spate groups list --bootstrap-server {cluster_bootstrap}")
    console.print("  metrics:                 the endpoints `spate cluster up --monitoring` prints (GET /metrics)")
    console.print("  notebooks with plots:    examples/notebooks/")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.quickstart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="page views to produce (default 20000)")
    parser.add_argument("--data-dir", type=Path, default=Path("spate-data/quickstart"),
                        help="where the embedded broker keeps its logs and the query its checkpoint (default ./spate-data/quickstart)")
    parser.add_argument("--keep-data", action="store_true",
                        help="keep what earlier runs left in the data dir and topics (default: start empty)")
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT[,...]",
                        help="run on these brokers (e.g. a cluster from `spate cluster up`) instead of a broker "
                             "started in this process")
    args = parser.parse_args(argv)
    if args.events <= 0:
        parser.error(f"--events must be positive, not {args.events}")
    if not args.keep_data:
        shutil.rmtree(args.data_dir, ignore_errors=True)
    console = Console(soft_wrap=True)
    counts = run(args.data_dir, args.events, console, bootstrap=args.bootstrap_server,
                 fresh=args.bootstrap_server is not None and not args.keep_data)
    return 0 if sum(counts.values()) >= args.events else 1


if __name__ == "__main__":
    sys.exit(main())
