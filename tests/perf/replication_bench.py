"""What replication costs: 3 brokers, RF 3 and acks=all next to RF 1 and acks=1, same cluster, same run.

    .venv/bin/python -m tests.perf.replication_bench [--rounds 3] [--records 200000] [--e2e-records 30000]

Starts ZooKeeper and three brokers, then in each round, on fresh topics of 6
partitions: confluent-kafka produces ``--records`` records of 1 KB with
acks=1 to an RF 1 topic and with acks=all to an RF 3 topic
(``min.insync.replicas=2``), and measures end-to-end latency (send to
receive) at 10,000 records/s on a one-partition topic of each kind. Prints a
Markdown table with the median of the rounds and the ratios the targets are
stated in: RF 3 acks=all throughput at least 0.5 of RF 1 acks=1, end-to-end
p99 with RF 3 acks=all under 10 ms. It also prints the CPU seconds the three
brokers together spent per MB produced, and the cores this machine has: the
brokers are CPU-bound, so on a machine with fewer cores than busy brokers the
ratio is bounded by the CPU cost ratio, not by waiting for followers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic

from tests.perf.client_bench import confluent_end_to_end
from tests.perf.test_broker_perf import PARTITIONS, produce
from tests.support.cluster import ClusterForTests, running_cluster
from tests.support.zookeeper import running_zookeeper

RECORD_SIZE = 1024
TARGET_THROUGHPUT_RATIO = 0.5
TARGET_P99_MS = 10.0


def _create(admin: AdminClient, name: str, partitions: int, replication: int) -> str:
    configs = {"min.insync.replicas": "2"} if replication > 1 else {}
    admin.create_topics([NewTopic(name, partitions, replication, config=configs)])[name].result(60)
    return name


def broker_cpu_seconds(cluster: ClusterForTests) -> float:
    """User plus system CPU time of every broker process so far (Linux ``/proc``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for broker in cluster.brokers.values():
        fields = Path(f"/proc/{broker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of proc(5)
    return total / ticks


def run_round(cluster: ClusterForTests, index: int, records: int, e2e_records: int) -> dict[str, float]:
    bootstrap = cluster.bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    megabytes = records * RECORD_SIZE / 1e6
    figures: dict[str, float] = {}
    for label, replication, acks in (("RF 1, acks=1", 1, "1"), ("RF 3, acks=all", 3, "all")):
        topic = _create(admin, f"bench-{index}-rf{replication}", PARTITIONS, replication)
        cpu_before = broker_cpu_seconds(cluster)
        figures[f"{label}: produce MB/s"] = megabytes / produce(bootstrap, topic, records, acks=acks)
        figures[f"{label}: broker CPU ms per MB"] = 1000 * (broker_cpu_seconds(cluster) - cpu_before) / megabytes
        latency_topic = _create(admin, f"bench-{index}-rf{replication}-e2e", 1, replication)
        p50, p99 = confluent_end_to_end(bootstrap, latency_topic, e2e_records, acks=acks)
        figures[f"{label}: end-to-end p50 ms"] = p50
        figures[f"{label}: end-to-end p99 ms"] = p99
    figures["throughput RF 3 acks=all / RF 1 acks=1"] = (
        figures["RF 3, acks=all: produce MB/s"] / figures["RF 1, acks=1: produce MB/s"]
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.perf.replication_bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--e2e-records", type=int, default=30_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="spate-replication-bench-") as scratch:
        base = Path(scratch)
        with running_zookeeper(base / "zookeeper") as zookeeper, \
                running_cluster(base / "cluster", zookeeper, brokers=3, overrides={
                    "log.segment.bytes": str(512 * 1024 * 1024), "log.segment.delete.delay.ms": "0",
                }) as cluster:
            cluster.wait_for(cluster.controller_id, "a controller")
            cluster.wait_for_metadata()
            rounds = [run_round(cluster, i, args.records, args.e2e_records) for i in range(args.rounds)]
    print(f"\n| measure ({args.rounds} rounds, {args.records:,} records of 1 KB) | rounds | median |")
    print("|---|---|---|")
    for name in rounds[0]:
        values = [r[name] for r in rounds]
        print(f"| {name} | {min(values):.2f}–{max(values):.2f} | {statistics.median(values):.2f} |")
    ratio = statistics.median(r["throughput RF 3 acks=all / RF 1 acks=1"] for r in rounds)
    p99 = statistics.median(r["RF 3, acks=all: end-to-end p99 ms"] for r in rounds)
    cost = statistics.median(r["RF 3, acks=all: broker CPU ms per MB"] / r["RF 1, acks=1: broker CPU ms per MB"]
                             for r in rounds)
    print(f"\n{os.cpu_count()} cores; the brokers spend {cost:.2f}x the CPU per MB with RF 3 acks=all")
    print(f"throughput ratio {ratio:.2f} (target at least {TARGET_THROUGHPUT_RATIO}); "
          f"RF 3 acks=all end-to-end p99 {p99:.2f} ms (target under {TARGET_P99_MS:g} ms)")


if __name__ == "__main__":
    main()
