"""Spate's consumer before and after incremental fetch sessions (KIP-227), same broker, same run.

    .venv/bin/python -m tests.perf.fetch_session_bench [--baseline REV] [--records 1000000] [--rounds 3]

Measures two versions of Spate's consumer: the code of this tree, and the code
of ``--baseline`` (default: the parent of the commit that gave the consumer
fetch sessions), extracted with ``git archive`` into a temporary directory.
Every measurement runs in a child process whose ``spate`` package comes from
one of the two trees; the trees take turns, ``--rounds`` times.

* **idle rounds**: a consumer assigned every partition of a quiet topic of
  ``--partitions`` (1,000) partitions, reaching its broker only through a
  TCP proxy that counts the bytes of each Fetch request and answer. After a
  warm-up, the bytes sent and received per Fetch round over ``--idle-s``
  seconds (default fetch settings: a round is one ``fetch_max_wait_ms``).
* **consume**: ``--records`` records of 100 B over 8 partitions, produced
  once, then read from the start with ``poll()`` (default settings): records/s.

Prints a Markdown table with the median of each figure and the ratio
after / before.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from contextlib import suppress
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FETCH = 1
CONSUME_PARTITIONS = 8
RECORD_SIZE = 100


# --- the child process: one consumer of one tree ---------------------------------------------------------------


def idle_worker(bootstrap: str, topic: str, partitions: int, seconds: float) -> None:
    """Catch up, say READY, keep polling ``seconds``, say DONE: the parent counts the bytes in between."""
    from spate.client import Consumer, TopicPartition

    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            consumer.poll(timeout_ms=100)
        print("READY", flush=True)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            consumer.poll(timeout_ms=100)
        print("DONE", flush=True)


def consume_worker(bootstrap: str, topic: str, records: int) -> None:
    from spate.client import Consumer, TopicPartition

    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(CONSUME_PARTITIONS)])
        read, started = 0, time.perf_counter()
        while read < records:
            read += len(consumer.poll(timeout_ms=1000))
            if time.perf_counter() - started > 600:
                raise TimeoutError(f"read {read} of {records} records in 600 s")
        print(f"RATE {read / (time.perf_counter() - started):.0f}", flush=True)


# --- counting the bytes of each API on the wire -------------------------------------------------------------------


class CountingProxy:
    """A TCP proxy on 127.0.0.1 that counts requests and answers, and their bytes, by API key."""

    def __init__(self, target_port: int, listen_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self._server = socket.create_server(("127.0.0.1", listen_port))
        self.lock = threading.Lock()
        self.sent: Counter[int] = Counter()  # API key -> request bytes
        self.received: Counter[int] = Counter()  # API key -> answer bytes
        self.requests: Counter[int] = Counter()
        self.answers: Counter[int] = Counter()
        threading.Thread(target=self._accept, daemon=True).start()

    def snapshot(self) -> tuple[Counter[int], ...]:
        with self.lock:
            return Counter(self.sent), Counter(self.received), Counter(self.requests), Counter(self.answers)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            keys: deque[int] = deque()  # API keys of the requests not yet answered, in order
            threading.Thread(target=self._pump, args=(client, upstream, keys, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, keys, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, keys: deque[int], requests: bool) -> None:
        pending = b""
        with suppress(OSError):
            while chunk := source.recv(1 << 16):
                pending += chunk
                while len(pending) >= 6:
                    size = struct.unpack_from(">i", pending)[0] + 4
                    if len(pending) < size:
                        break
                    self._count(pending[:size], keys, requests)
                    pending = pending[size:]
                sink.sendall(chunk)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def _count(self, frame: bytes, keys: deque[int], request: bool) -> None:
        with self.lock:
            if request:
                key = struct.unpack_from(">h", frame, 4)[0]
                keys.append(key)  # the consumer sends nothing that goes unanswered
                self.sent[key] += len(frame)
                self.requests[key] += 1
            else:
                key = keys.popleft()
                self.received[key] += len(frame)
                self.answers[key] += 1

    def close(self) -> None:
        self._server.close()


# --- the parent: brokers, trees, rounds ---------------------------------------------------------------------------


def baseline_revision() -> str:
    """The parent of the first commit whose consumer fetcher uses FetchSessions."""
    introduced = subprocess.run(
        ["git", "log", "--format=%H", "--reverse", "-S", "FetchSessions", "--", "spate/client/consumer/fetcher.py"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()
    if not introduced:
        raise SystemExit("no commit gives the consumer fetch sessions yet: name one with --baseline")
    return introduced[0] + "^"


def extract_tree(revision: str, into: Path) -> Path:
    """``spate`` at ``revision``, with this benchmark beside it so that the child can run it as a module."""
    archive = subprocess.run(["git", "archive", revision, "spate", "tests/__init__.py", "tests/perf/__init__.py"],
                             cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    shutil.copy(Path(__file__), into / "tests" / "perf" / Path(__file__).name)
    return into


def run_worker(tree: Path, *args: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-m", "tests.perf.fetch_session_bench", "--worker", *args],
                             cwd=tree, stdout=subprocess.PIPE, text=True)
    origin = child.stdout.readline().strip()
    assert origin == f"SPATE {tree}", f"the child imported spate from elsewhere: {origin!r}"
    return child


def idle_round(tree: Path, proxy: CountingProxy, bootstrap: str, topic: str, args) -> tuple[float, float]:
    """Fetch bytes (sent, received) per round of one consumer of ``tree``."""
    child = run_worker(tree, "idle", bootstrap, topic, str(args.partitions), str(args.idle_s))
    try:
        assert child.stdout.readline().strip() == "READY", "the idle consumer did not start"
        sent0, received0, requests0, answers0 = proxy.snapshot()
        assert child.stdout.readline().strip() == "DONE", "the idle consumer did not finish"
        sent1, received1, requests1, answers1 = proxy.snapshot()
    finally:
        child.wait(60)
    requests, answers = requests1[FETCH] - requests0[FETCH], answers1[FETCH] - answers0[FETCH]
    return (sent1[FETCH] - sent0[FETCH]) / max(requests, 1), (received1[FETCH] - received0[FETCH]) / max(answers, 1)


def consume_round(tree: Path, bootstrap: str, topic: str, records: int) -> float:
    child = run_worker(tree, "consume", bootstrap, topic, str(records))
    out, _ = child.communicate(timeout=900)
    rates = [line.split()[1] for line in out.splitlines() if line.startswith("RATE ")]
    assert rates, f"the consumer reported no rate: {out!r}"
    return float(rates[0])


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(120)


def fill(bootstrap: str, topic: str, records: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20,
                         "queue.buffering.max.messages": 1_000_000})
    value = b"v" * RECORD_SIZE
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % CONSUME_PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", help="the revision to compare with (default: before fetch sessions)")
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--idle-s", type=float, default=5.0)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from tests.support.broker_process import BrokerProcess, free_port

    baseline = args.baseline or baseline_revision()
    with tempfile.TemporaryDirectory(prefix="fetch-session-bench-") as tmp:
        root = Path(tmp)
        trees = {"before": extract_tree(baseline, Path(tempfile.mkdtemp(dir=root))), "after": REPO}
        proxy_port = free_port()
        quiet = BrokerProcess(root / "quiet", overrides={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}"})
        proxy = CountingProxy(quiet.port, proxy_port)
        busy = BrokerProcess(root / "busy")
        quiet.start(), busy.start()
        try:
            create_topic(quiet.bootstrap, "quiet", args.partitions)
            create_topic(busy.bootstrap, "busy", CONSUME_PARTITIONS)
            fill(busy.bootstrap, "busy", args.records)
            idle: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            rates: dict[str, list[float]] = {name: [] for name in trees}
            for round_ in range(args.rounds):
                order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
                for name in order:
                    idle[name].append(idle_round(trees[name], proxy, f"127.0.0.1:{proxy_port}", "quiet", args))
                    rates[name].append(consume_round(trees[name], busy.bootstrap, "busy", args.records))
                    print(f"round {round_ + 1} {name}: idle {idle[name][-1]}, consume {rates[name][-1]:,.0f}/s",
                          file=sys.stderr)
        finally:
            proxy.close()
            quiet.stop(), busy.stop()
    report(baseline, idle, rates, args)


def report(baseline: str, idle: dict[str, list[tuple[float, float]]], rates: dict[str, list[float]], args) -> None:
    def median(name: str, figure: int) -> float:
        return statistics.median(v[figure] for v in idle[name])

    rows = [
        (f"Fetch bytes sent per idle round, {args.partitions:,} partitions", median("before", 0), median("after", 0)),
        (f"Fetch bytes received per idle round, {args.partitions:,} partitions", median("before", 1),
         median("after", 1)),
        (f"records/s, {args.records:,} x {RECORD_SIZE} B over {CONSUME_PARTITIONS} partitions",
         statistics.median(rates["before"]), statistics.median(rates["after"])),
    ]
    print(f"\nSpate consumer, before ({baseline}) and after fetch sessions; median of {args.rounds} rounds\n")
    print("| figure | before | after | after / before |\n|---|---:|---:|---:|")
    for label, before, after in rows:
        print(f"| {label} | {before:,.0f} | {after:,.0f} | {after / before:.3f} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        import spate

        print(f"SPATE {Path(spate.__file__).resolve().parents[1]}", flush=True)
        mode, rest = sys.argv[2], sys.argv[3:]
        if mode == "idle":
            idle_worker(rest[0], rest[1], int(rest[2]), float(rest[3]))
        else:
            consume_worker(rest[0], rest[1], int(rest[2]))
    else:
        main()
