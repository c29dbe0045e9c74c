"""``spate perf produce|consume|end-to-end``: throughput and latency against any Kafka-protocol broker.

Progress goes to stderr (a rich progress bar on a terminal, a line every
few seconds otherwise); the final summary is one line on stdout, in the
shape of Kafka's perf tools, e.g. for ``produce``::

    10000 records sent, 5321.1 records/sec (5.20 MB/sec), 12.34 ms avg latency, 40.10 ms max latency,
    10.02 ms 50th, 25.31 ms 95th, 33.00 ms 99th, 40.10 ms 99.9th.

(one line). Produce latency is send to acknowledgement (the delivery
callback), taken from every record, or from every n-th one when an unpaced
run sends more than ``MAX_LATENCY_SAMPLES`` records; consume latency is the
wait for each non-empty poll; end-to-end latency is from the send to the
record's arrival at the consumer, read from a send time the record carries
in its first 8 bytes (nanoseconds, big-endian).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from spate.cli.common import (
    ACKS_CHOICES,
    COMPRESSION_CHOICES,
    add_connection_arguments,
    add_output_argument,
    client_errors,
    client_security,
    command_group,
    positive_int,
    print_json,
    stderr_is_terminal,
)
from spate.cli.errors import CliError
from spate.cli.perf_series import Series, plot_series, write_series
from spate.cli.perf_stats import LatencySample, Summary, percentile  # noqa: F401  (percentile: part of the API)
from spate.client import Admin, Consumer, Producer, TopicPartition

PROGRESS_INTERVAL_S = 5.0
# ``perf produce`` reports progress once per this many records, not per record.
_REPORT_EVERY = 1_000
# ``perf end-to-end``: how long the broker may hold an empty fetch (Spate and Kafka answer at
# the first append; a broker that does not waits this long), and the longest the loop waits
# in poll before sending the records now due.
_E2E_FETCH_MAX_WAIT_MS = 100
_E2E_POLL_MS = 5
_SEND_TIME = struct.Struct(">q")


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "perf", "measure throughput and latency")

    produce = commands.add_parser("produce", help="produce N records and report throughput and ack latency")
    _common_options(produce)
    produce.add_argument("--record-size", type=positive_int, required=True, metavar="B", help="value size in bytes")
    produce.add_argument("--throughput", type=float, default=-1, metavar="R",
                         help="records/s to aim for; -1 (default) means as fast as possible")
    produce.add_argument("--acks", choices=ACKS_CHOICES, default="all")
    produce.add_argument("--compression", choices=COMPRESSION_CHOICES, default="none")
    produce.add_argument("--batch-size", type=positive_int, default=16_384, metavar="BYTES")
    produce.add_argument("--linger-ms", type=float, default=5, metavar="MS")
    produce.set_defaults(func=run_produce)

    consume = commands.add_parser("consume", help="consume N records from the start and report throughput")
    _common_options(consume)
    consume.add_argument("--timeout-ms", type=positive_int, default=10_000, metavar="MS",
                         help="fail after this long without a new record (default: 10000)")
    consume.set_defaults(func=run_consume)

    e2e = commands.add_parser("end-to-end", help="produce and consume N records, report produce-to-consume latency")
    _common_options(e2e)
    e2e.add_argument("--throughput", type=float, required=True, metavar="R", help="records/s to produce")
    e2e.add_argument("--record-size", type=positive_int, default=100, metavar="B",
                     help="value size in bytes, at least 8 (default: 100)")
    e2e.add_argument("--acks", choices=ACKS_CHOICES, default="1")
    e2e.add_argument("--timeout-ms", type=positive_int, default=10_000, metavar="MS",
                     help="fail after this long without a new record (default: 10000)")
    e2e.set_defaults(func=run_end_to_end)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True, metavar="T")
    parser.add_argument("--records", type=positive_int, required=True, metavar="N")
    add_connection_arguments(parser)
    parser.add_argument("--series", type=Path, metavar="FILE",
                        help="write the per-second series (records, MB, latency) to FILE: CSV if it ends in .csv, "
                             "else JSON")
    parser.add_argument("--plot", type=Path, metavar="FILE",
                        help="plot the per-second throughput and latency into FILE (.png, .svg, .pdf; needs matplotlib)")
    add_output_argument(parser)


# --- progress and pacing ------------------------------------------------------------------------


class Reporter:
    """Progress on stderr: a rich bar on a terminal, a window line every few seconds otherwise."""

    def __init__(self, total: int, verb: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._total = total
        self._verb = verb
        self._clock = clock
        self._window_start = clock()
        self._window_count = 0
        self._progress: Progress | None = None
        self._task = None
        if stderr_is_terminal():
            self._progress = Progress(
                TextColumn(f"records {verb}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                console=Console(file=sys.stderr), transient=True,
            )
            self._task = self._progress.add_task(verb, total=total)
            self._progress.start()

    def advance(self, done: int, count: int = 1) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=done)
            return
        self._window_count += count
        now = self._clock()
        if now - self._window_start >= PROGRESS_INTERVAL_S:
            rate = self._window_count / (now - self._window_start)
            print(f"{done}/{self._total} records {self._verb}, {rate:.1f} records/sec", file=sys.stderr, flush=True)
            self._window_start, self._window_count = now, 0

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


class Throttle:
    """Paces sends to ``rate`` per second (no pacing when rate <= 0)."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._rate = rate
        self._clock = clock
        self._sleep = sleep
        self._start = clock()

    def wait_for(self, sent: int) -> None:
        if self._rate <= 0:
            return
        ahead = sent / self._rate - (self._clock() - self._start)
        if ahead > 0:
            self._sleep(ahead)


# --- commands -----------------------------------------------------------------------------------


def run_produce(args: argparse.Namespace) -> int:
    payload = os.urandom(args.record_size)
    latencies = LatencySample(args.records, paced=args.throughput > 0)
    reporter = Reporter(args.records, "sent")
    probe_every = latencies.every
    reporter_mark = 0

    with client_errors(args.bootstrap_server):
        producer = _producer(args, acks=args.acks, compression_type=args.compression,
                             batch_size=args.batch_size, linger_ms=args.linger_ms)
        try:
            producer.partitions_for(args.topic)  # fail fast on a bad topic or broker
            send = producer.send
            topic = args.topic
            paced = args.throughput > 0
            # Paced from here: connecting and fetching metadata must not count as time
            # behind schedule, or the first records would go out in one late burst.
            throttle = Throttle(args.throughput)
            started = time.perf_counter()
            series = Series(started)
            # Runs of ``probe_every`` records, the first of each timed; no per-record
            # bookkeeping beyond the send itself when the run is not paced.
            for first in range(0, args.records, probe_every):
                if paced:
                    throttle.wait_for(first)
                send(topic, payload, on_delivery=latencies.probe(time.perf_counter()))
                for _ in range(min(probe_every, args.records - first) - 1):
                    send(topic, payload)
                sent = min(first + probe_every, args.records)
                if sent - reporter_mark >= _REPORT_EVERY:
                    reporter.advance(sent, sent - reporter_mark)
                    series.add(time.perf_counter(), sent - reporter_mark, (sent - reporter_mark) * args.record_size)
                    reporter_mark = sent
            reporter.advance(args.records, args.records - reporter_mark)
            series.add(time.perf_counter(), args.records - reporter_mark,
                       (args.records - reporter_mark) * args.record_size)
            producer.flush(args.api_timeout_ms / 1000 + 5)
            elapsed = time.perf_counter() - started
        finally:
            reporter.close()
            producer.close(5)
    if latencies.failures:
        raise CliError(f"{latencies.failed} of {latencies.probes} timed records failed: "
                       f"{_first_line(latencies.failures[0])}")
    for acked_at, value in zip(latencies.acked_at, latencies.values):
        series.latency(acked_at, value)
    summary = Summary(args.records, args.records * args.record_size, elapsed, latencies.values)
    return finish(args, summary, "sent", series)


def finish(args: argparse.Namespace, summary: Summary, verb: str, series: Series) -> int:
    """The summary on stdout (a line, or JSON with ``--output json``), then the series and plot asked for."""
    if args.output == "json":
        print_json(summary.document(verb))
    else:
        print(summary.line(verb), flush=True)
    rows = series.rows()
    if args.series is not None:
        write_series(rows, args.series)
    if args.plot is not None:
        plot_series(rows, args.plot, f"spate perf: {summary.records} records {verb}, topic {args.topic}")
    return 0


def run_consume(args: argparse.Namespace) -> int:
    latencies: list[float] = []
    count = size = 0
    reporter = Reporter(args.records, "consumed")
    with client_errors(args.bootstrap_server):
        partitions = _partitions(args)
        consumer = _consumer(args)
        try:
            consumer.assign(partitions)
            consumer.seek_to_beginning(*partitions)
            started = idle_since = time.perf_counter()
            series = Series(started)
            while count < args.records:
                polled = time.perf_counter()
                batches = consumer.poll_batches(timeout_ms=100)
                now = time.perf_counter()
                if not batches:
                    if (now - idle_since) * 1000 > args.timeout_ms:
                        raise CliError(f"no new records for {args.timeout_ms} ms after {count} of {args.records}")
                    continue
                latencies.append((now - polled) * 1000)
                series.latency(now, latencies[-1])
                idle_since = now
                for batch in batches:
                    batch_bytes = sum(len(v or b"") + len(k or b"") for k, v in zip(batch.keys, batch.values))
                    count += len(batch)
                    size += batch_bytes
                    series.add(now, len(batch), batch_bytes)
                reporter.advance(min(count, args.records))
            elapsed = time.perf_counter() - started
        finally:
            reporter.close()
            consumer.close()
    return finish(args, Summary(count, size, elapsed, latencies), "consumed", series)


def run_end_to_end(args: argparse.Namespace) -> int:
    """Produce at ``--throughput`` and consume on one thread; latency is send to arrival at the consumer.

    The producer does not linger, as in Kafka's end-to-end latency tool.
    That tool also sets ``fetch.max.wait.ms=0`` and polls in a loop; here a
    fetch with nothing to return waits at the broker instead (up to
    ``_E2E_FETCH_MAX_WAIT_MS``), which Spate, like Kafka, answers at the
    first append: the same promptness without a stream of empty fetches
    competing with the clients and the broker for the CPU. Records
    come back through ``poll_batches``, so no per-record objects are built
    on the measuring thread.
    """
    if args.record_size < _SEND_TIME.size:
        raise CliError(f"--record-size must be at least {_SEND_TIME.size} for end-to-end", exit_code=2)
    padding = os.urandom(args.record_size - _SEND_TIME.size)
    latencies: list[float] = []
    reporter = Reporter(args.records, "round-tripped")
    unpack = _SEND_TIME.unpack_from
    clock_ns = time.perf_counter_ns
    with client_errors(args.bootstrap_server):
        producer = _producer(args, acks=args.acks, linger_ms=0)
        consumer = _consumer(args, fetch_max_wait_ms=_E2E_FETCH_MAX_WAIT_MS)
        try:
            producer.partitions_for(args.topic)  # creates the topic where the broker allows it
            partitions = _partitions(args)
            consumer.assign(partitions)
            consumer.seek_to_end(*partitions)
            for tp in partitions:
                consumer.position(tp)
            started = idle_since = time.perf_counter()
            series = Series(started)
            sent = 0
            while len(latencies) < args.records:
                now = time.perf_counter()
                due = args.records if args.throughput <= 0 else int((now - started) * args.throughput) + 1
                while sent < min(due, args.records):
                    producer.send(args.topic, _SEND_TIME.pack(clock_ns()) + padding)
                    sent += 1
                # Sends due while this waits go out in one burst after it: at most a few
                # milliseconds late, which does not count (each record carries its own send
                # time), and the bursts keep requests, and so CPU, per record low.
                batches = consumer.poll_batches(timeout_ms=_E2E_POLL_MS)
                if batches:
                    arrived = clock_ns()
                    first_new = len(latencies)
                    for batch in batches:
                        for value in batch.values:
                            if value is not None and len(value) >= _SEND_TIME.size:
                                latencies.append((arrived - unpack(value)[0]) / 1e6)
                    series.add(arrived / 1e9, len(latencies) - first_new, (len(latencies) - first_new) * args.record_size)
                    for value in latencies[first_new:]:
                        series.latency(arrived / 1e9, value)
                    idle_since = time.perf_counter()
                    reporter.advance(len(latencies))
                elif (time.perf_counter() - idle_since) * 1000 > args.timeout_ms:
                    raise CliError(f"no records came back for {args.timeout_ms} ms "
                                   f"({len(latencies)} of {args.records} received)")
            elapsed = time.perf_counter() - started
        finally:
            reporter.close()
            consumer.close()
            producer.close(5)
    summary = Summary(len(latencies), len(latencies) * args.record_size, elapsed, latencies)
    return finish(args, summary, "round-tripped", series)


def _producer(args: argparse.Namespace, **options: object) -> Producer:
    return Producer(
        args.bootstrap_server, max_block_ms=args.api_timeout_ms, request_timeout_ms=args.api_timeout_ms,
        delivery_timeout_ms=2 * args.api_timeout_ms + 5_000, client_id="spate-perf",
        **client_security(args), **options,  # type: ignore[arg-type]
    )


def _consumer(args: argparse.Namespace, fetch_max_wait_ms: int = 100) -> Consumer:
    return Consumer(
        args.bootstrap_server, auto_offset_reset="earliest", default_api_timeout_ms=args.api_timeout_ms,
        request_timeout_ms=args.api_timeout_ms, fetch_max_wait_ms=fetch_max_wait_ms, client_id="spate-perf",
        **client_security(args),
    )


def _partitions(args: argparse.Namespace) -> list[TopicPartition]:
    with Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
               request_timeout_ms=args.api_timeout_ms, client_id="spate-perf", **client_security(args)) as admin:
        description = admin.describe_topics([args.topic])[args.topic]
    return [TopicPartition(args.topic, p.partition) for p in description.partitions]


def _first_line(error: BaseException) -> str:
    return (str(error).strip() or type(error).__name__).splitlines()[0]
