"""Many client connections on one broker: memory per connection, produce latency, connection limits.

    .venv/bin/python -m tests.perf.connection_scale_bench [--connections 1,100,1000] [--seconds 10]

One ``spate broker start`` process (its open-file limit raised) and, in this
process, raw Kafka connections (Spate's codec, one socket each, no client
threads), so a thousand connections cost the client little:

* idle: the connections are opened and each sends ApiVersions; the broker's
  RSS (``/proc/PID/status``) before and after gives the memory per
  connection;
* active: every connection then produces one 100 B record every 100 ms
  (10 records/s, acks=1, Produce v7, one request in flight per connection)
  for ``--seconds``; the latency of each request (sent → answered) gives
  p50/p99/max, and every answer's error code is checked;
* limits: a second broker with ``max.connections.per.ip=N`` (and one with
  ``max.connections=N``) takes N connections, and the next one is closed
  by the broker (the client sees the connection end, not a hang).

Prints a Markdown table; compare rows of one run (the machine may be shared).
"""

from __future__ import annotations

import argparse
import selectors
import socket
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from spate.cli.perf_stats import percentile
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch
from tests.perf.measurements import cpu_seconds, raise_open_file_limit, rss_kb
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess, running_broker

TOPIC = "connections"
PARTITIONS = 8
RECORDS_PER_SECOND = 10
PRODUCE_VERSION = 7  # not flexible, so an answer's error code sits at a fixed place
TIMEOUT_S = 60.0


@dataclass
class Connection:
    sock: socket.socket
    request: bytes
    error_at: int  # where the (only) partition's error code sits in an answer frame
    sent_at: float | None = None
    next_at: float = 0.0
    buffer: bytearray = field(default_factory=bytearray)


@dataclass
class Row:
    connections: int
    rss_per_connection_kb: float
    requests: int
    errors: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    broker_cpu_s: float
    client_cpu_s: float


def produce_frame(index: int) -> tuple[bytes, int]:
    """A Produce request of one 100 B record to partition ``index % PARTITIONS``, and where its answer's error sits."""
    batch = build_batch([Record(0, int(time.time() * 1000), None, b"x" * 100)])
    Q = ProduceRequest
    body = Q(acks=1, timeout_ms=30_000, topic_data=[Q.TopicProduceData(
        name=TOPIC, partition_data=[Q.PartitionProduceData(index=index % PARTITIONS, records=batch)])])
    _, frame = ClientConnection(client_id=f"conn-{index}").send_request(ApiKey.PRODUCE, PRODUCE_VERSION, body)
    # size, correlation id, topics count, topic name (int16 length + bytes), partitions count, partition index
    return frame, 4 + 4 + 4 + 2 + len(TOPIC) + 4 + 4


def open_connections(bootstrap: str, count: int) -> list[Connection]:
    host, port = bootstrap.rsplit(":", 1)
    connections = []
    for index in range(count):
        sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        codec = ClientConnection(client_id=f"conn-{index}")
        sock.sendall(codec.send_request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
            client_software_name="connection-bench", client_software_version="1"))[1])
        while codec.next_response() is None:
            data = sock.recv(65536)
            if not data:
                raise ConnectionError(f"the broker closed connection {index} before answering ApiVersions")
            codec.receive_data(data)
        request, error_at = produce_frame(index)
        connections.append(Connection(sock, request, error_at))
    for connection in connections:
        connection.sock.setblocking(False)
    return connections


def drive(connections: list[Connection], seconds: float) -> tuple[list[float], int]:
    """Each connection produces at RECORDS_PER_SECOND, one request in flight; (latencies in ms, errors)."""
    selector = selectors.DefaultSelector()
    for connection in connections:
        selector.register(connection.sock, selectors.EVENT_READ, connection)
    interval = 1.0 / RECORDS_PER_SECOND
    start = time.monotonic()
    for index, connection in enumerate(connections):  # spread the sends over one interval
        connection.next_at = start + interval * index / len(connections)
    latencies: list[float] = []
    errors = 0
    end = start + seconds
    while (now := time.monotonic()) < end or any(c.sent_at is not None for c in connections):
        if now > end + TIMEOUT_S:
            raise TimeoutError("answers missing long after the run")
        for connection in connections:
            if connection.sent_at is None and now >= connection.next_at and now < end:
                connection.sock.send(connection.request)  # ~200 B: the socket buffer takes it whole
                connection.sent_at = now
                connection.next_at += interval
        for key, _ in selector.select(timeout=0.005):
            connection = key.data
            connection.buffer += connection.sock.recv(65536)
            while len(connection.buffer) >= 4:
                size = struct.unpack_from(">i", connection.buffer)[0]
                if len(connection.buffer) < 4 + size:
                    break
                error = struct.unpack_from(">h", connection.buffer, connection.error_at)[0]
                errors += error != 0
                del connection.buffer[:4 + size]
                latencies.append((time.monotonic() - connection.sent_at) * 1000)
                connection.sent_at = None
    selector.close()
    return latencies, errors


def measure(broker: BrokerProcess, count: int, seconds: float) -> Row:
    before = rss_kb(broker.process.pid)
    connections = open_connections(broker.bootstrap, count)
    time.sleep(1.0)  # let the broker settle its per-connection state
    per_connection = (rss_kb(broker.process.pid) - before) / count
    cpu_before, client_before = cpu_seconds(broker.process.pid), time.process_time()
    try:
        latencies, errors = drive(connections, seconds)
        ordered = sorted(latencies)
    finally:
        for connection in connections:
            connection.sock.close()
    return Row(count, per_connection, len(latencies), errors, percentile(ordered, 0.5),
               percentile(ordered, 0.99), max(latencies, default=float("nan")),
               cpu_seconds(broker.process.pid) - cpu_before, time.process_time() - client_before)


def refused_beyond(limit_property: str, limit: int, work_dir: Path) -> str:
    """Open ``limit`` connections to a broker limited to that many, then one more: what happens to it."""
    with running_broker(BrokerProcess(work_dir, overrides={limit_property: str(limit)})) as broker:
        host, port = broker.bootstrap.rsplit(":", 1)
        kept = open_connections(broker.bootstrap, limit)
        extra = socket.create_connection((host, int(port)), timeout=10)
        try:
            codec = ClientConnection(client_id="one-too-many")
            extra.sendall(codec.send_request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(
                client_software_name="connection-bench", client_software_version="1"))[1])
            extra.settimeout(5)
            try:
                return "answered (limit not enforced)" if extra.recv(65536) else "closed by the broker"
            except ConnectionResetError:
                return "reset by the broker"
            except socket.timeout:
                pass
            # Not accepted yet: it waits in the listen backlog until a slot frees, as Kafka's acceptor does.
            kept.pop().sock.close()
            extra.settimeout(10)
            try:
                served = bool(extra.recv(65536))
            except (socket.timeout, ConnectionResetError):
                served = False
            return (f"left waiting, then served once one of the {limit} closed" if served
                    else "left waiting, and not served when a slot freed")
        finally:
            extra.close()
            for connection in kept:
                connection.sock.close()


def table(rows: list[Row]) -> str:
    lines = ["| connections | broker RSS per connection KB | requests | errors | p50 ms | p99 ms | max ms "
             "| broker CPU s | client CPU s |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.connections:,} | {r.rss_per_connection_kb:.1f} | {r.requests:,} | {r.errors} "
                     f"| {r.p50_ms:.1f} | {r.p99_ms:.1f} | {r.max_ms:.1f} | {r.broker_cpu_s:.1f} "
                     f"| {r.client_cpu_s:.1f} |")
    return "\n".join(lines)


def measure_all(counts: list[int], seconds: float, limit: int = 50) -> tuple[list[Row], list[str]]:
    """A row per connection count, and a line per connection limit saying what became of connection N+1."""
    raise_open_file_limit()
    with tempfile.TemporaryDirectory(prefix="connection-bench-") as scratch:
        with running_broker(BrokerProcess(Path(scratch) / "broker")) as broker:
            create_topic(broker.bootstrap, TOPIC, partitions=PARTITIONS)
            measure(broker, PARTITIONS, 1.0)  # every partition's log exists before the measured rows
            rows = [measure(broker, count, seconds) for count in counts]
        limits = [f"- `{name}={limit}`: connection {limit + 1} was {refused_beyond(name, limit, Path(scratch) / name)}"
                  for name in ("max.connections.per.ip", "max.connections")]
    return rows, limits


def report(rows: list[Row], limits: list[str]) -> str:
    return table(rows) + "\n\n" + "\n".join(limits)


def run(counts: list[int], seconds: float, limit: int = 50) -> str:
    return report(*measure_all(counts, seconds, limit))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="1,100,1000", help="comma-separated connection counts")
    parser.add_argument("--seconds", type=float, default=10.0, help="produce run length per row")
    args = parser.parse_args(argv)
    print(run([int(n) for n in args.connections.split(",")], args.seconds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
