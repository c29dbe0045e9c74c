"""Metadata latency on a real broker: one topic of 1, 1,000 or 10,000 partitions, and all topics.

    .venv/bin/python -m tests.perf.metadata_bench [--partitions 1,1000,10000] [--requests 200]
        [--baseline-source DIR] [--version 12]

A fresh ``spate broker start`` process gets one topic per partition count
(replication factor 1); then, on one connection, ``--requests`` Metadata
requests name each topic in turn, and as many ask for all topics. Latency
is from sending the request until the answer's last byte is read: the
answer is not decoded, so the client's own decoding (10,000 partition
entries take it tens of milliseconds) is not counted.

``--baseline-source DIR`` also runs the same measurement on a broker started
from the sources in DIR (say ``git archive <commit> | tar -x -C DIR``) and
prints the ratio of each figure, baseline over this tree: run both in one
invocation, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from spate.cli.perf_stats import percentile
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection
from spate.protocol.messages.metadata import MetadataRequest
from tests.perf.measurements import raise_open_file_limit
from tests.support.admin_requests import create_topic, produce_one
from tests.support.broker_process import BrokerProcess

ALL_TOPICS = "(all topics)"


class SourceBrokerProcess(BrokerProcess):
    """A broker process importing its code from ``source`` instead of the working directory."""

    def __init__(self, data_dir: Path, source: Path, **kwargs: object) -> None:
        super().__init__(data_dir, **kwargs)  # type: ignore[arg-type]
        self.source = source

    def command(self) -> list[str]:
        cmd = super().command()
        bootstrap = (f"import runpy, sys; sys.path.insert(0, {str(self.source)!r}); "
                     "runpy.run_module('spate.cli.main', run_name='__main__')")
        return [sys.executable, "-c", bootstrap, *cmd[3:]]


class RawMetadata:
    """Metadata requests on one socket; each answer is read whole but not decoded."""

    def __init__(self, bootstrap: str, version: int) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.codec = ClientConnection(client_id="metadata-bench")
        self.version = version

    def round_trip_ms(self, topics: list[str] | None) -> tuple[float, int]:
        """Milliseconds until the answer was read, and its size in bytes."""
        wanted = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
        body = MetadataRequest(topics=wanted, allow_auto_topic_creation=False)
        frame = self.codec.send_request(ApiKey.METADATA, self.version, body)[1]
        started = time.perf_counter()
        self.sock.sendall(frame)
        size = struct.unpack(">i", self._read(4))[0]
        self._read(size)
        return (time.perf_counter() - started) * 1000, size

    def _read(self, count: int) -> bytes:
        chunks, left = [], count
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


@dataclass
class Figures:
    target: str
    p50_ms: float
    p99_ms: float
    answer_bytes: int


def topic_name(partitions: int) -> str:
    return f"meta-{partitions}"


def measure(broker: BrokerProcess, counts: list[int], requests: int, version: int) -> list[Figures]:
    broker.start(timeout=120)
    try:
        for count in counts:
            result = create_topic(broker.bootstrap, topic_name(count), partitions=count, replication_factor=1,
                                  timeout_ms=600_000)
            if result.error_code != 0:
                raise RuntimeError(f"creating {topic_name(count)} failed: error {result.error_code}")
            _wait_writable(broker.bootstrap, topic_name(count), count - 1)
        wire = RawMetadata(broker.bootstrap, version)
        try:
            targets: list[tuple[str, list[str] | None]] = [(topic_name(c), [topic_name(c)]) for c in counts]
            targets.append((ALL_TOPICS, None))
            return [_time_requests(wire, name, topics, requests) for name, topics in targets]
        finally:
            wire.close()
    finally:
        broker.stop(timeout=120)


def _wait_writable(bootstrap: str, topic: str, partition: int, timeout_s: float = 600.0) -> None:
    """Wait until the topic's last partition takes a produce: its log exists, creation work is over."""
    deadline = time.monotonic() + timeout_s
    while produce_one(bootstrap, topic, partition).error_code != 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic}-{partition} not writable after {timeout_s}s")
        time.sleep(0.1)


def _time_requests(wire: RawMetadata, name: str, topics: list[str] | None, requests: int) -> Figures:
    wire.round_trip_ms(topics)  # the first answer after a change is built, not looked up: not counted
    latencies, size = [], 0
    for _ in range(requests):
        elapsed, size = wire.round_trip_ms(topics)
        latencies.append(elapsed)
    latencies.sort()
    return Figures(name, percentile(latencies, 0.5), percentile(latencies, 0.99), size)


def table(current: list[Figures], baseline: list[Figures] | None) -> str:
    lines = ["| Metadata for | answer KB | p50 ms | p99 ms |" + (" baseline p50 ms | baseline p99 ms | "
                                                               "p50 ratio | p99 ratio |" if baseline else ""),
             "|---|---:|---:|---:|" + ("---:|---:|---:|---:|" if baseline else "")]
    for index, row in enumerate(current):
        line = f"| {row.target} | {row.answer_bytes / 1024:.1f} | {row.p50_ms:.2f} | {row.p99_ms:.2f} |"
        if baseline:
            base = baseline[index]
            line += (f" {base.p50_ms:.2f} | {base.p99_ms:.2f} | {base.p50_ms / row.p50_ms:.1f} | "
                     f"{base.p99_ms / row.p99_ms:.1f} |")
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", default="1,1000,10000", help="comma-separated partition counts")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per topic")
    parser.add_argument("--version", type=int, default=12, help="Metadata request version")
    parser.add_argument("--baseline-source", type=Path, help="sources to compare against (a checkout's root)")
    args = parser.parse_args(argv)
    raise_open_file_limit()
    counts = [int(p) for p in args.partitions.split(",")]
    overrides = {"max.broker.partitions": "100000"}
    baseline = None
    if args.baseline_source is not None:
        with tempfile.TemporaryDirectory(prefix="metadata-bench-base-") as tmp:
            broker = SourceBrokerProcess(Path(tmp), args.baseline_source.resolve(), overrides=overrides)
            baseline = measure(broker, counts, args.requests, args.version)
    with tempfile.TemporaryDirectory(prefix="metadata-bench-") as tmp:
        current = measure(BrokerProcess(Path(tmp), overrides=overrides), counts, args.requests, args.version)
    print(table(current, baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
