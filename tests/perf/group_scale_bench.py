"""Consumer groups at scale: a 1,000-member group rebalancing, and 1,000 groups committing every second.

    .venv/bin/python -m tests.perf.group_scale_bench [--members 1000] [--groups 1000] [--seconds 10]
        [--only classic|consumer|commits ...]

One ``spate broker start`` process; members and committers are raw Kafka
connections (Spate's codec), as in ``group_rebalance_bench``:

* rebalance: a stable group of ``--members`` members, then one more joins;
  seconds from the newcomer's first JoinGroup until every member has its
  new assignment, with the classic protocol (the others hear of it from
  their heartbeats, sent all at once, then every member rejoins, the leader
  assigns, all sync) and with the consumer protocol (KIP-848 heartbeats);
  with the CPU seconds the broker and the load generator used in that
  time, which tell whose work the seconds are. Target: ≤ 5 s.
* commits: ``--groups`` groups (no members: simple, standalone commits, as
  a consumer with manual assignment makes) each commit one partition's
  offset once a second for ``--seconds``, round-robin over 10 connections,
  pipelined (a commit is sent when due, whatever is in flight); commits/s achieved against the asked rate, and
  the p50/p99 of a commit's latency. Sustained means the achieved rate
  keeps up with the asked one and every commit succeeds.
"""

from __future__ import annotations

import argparse
import selectors
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from spate.cli.perf_stats import percentile
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from tests.perf.group_rebalance_bench import (
    DEADLINE_S,
    PARTITIONS,
    _wait_for_coordinator,
    classic_join_one,
    consumer_join_one,
)
from tests.perf.measurements import raise_open_file_limit
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.raw_client import RawClient

TOPIC = "bench"
COMMIT_CONNECTIONS = 10
REBALANCE_TARGET_S = 5.0
# The benchmark's parts, in the order they run: the two rebalances, then the commit load.
PARTS = ("classic", "consumer", "commits")


def commit_request(group: str, offset: int) -> OffsetCommitRequest:
    Q = OffsetCommitRequest
    partition = Q.OffsetCommitRequestPartition(partition_index=0, committed_offset=offset, committed_metadata="")
    return Q(group_id=group, generation_id_or_member_epoch=-1, member_id="",
             topics=[Q.OffsetCommitRequestTopic(name=TOPIC, partitions=[partition])])


def commit_load(bootstrap: str, groups: int, seconds: float) -> dict[str, float]:
    """Every group commits once per second, spread over the second, pipelined over a few connections."""
    wires = [RawClient(bootstrap, "spate-bench", timeout=60) for _ in range(COMMIT_CONNECTIONS)]
    names = [f"committer-{i}" for i in range(groups)]
    for name in names:
        _wait_for_coordinator(bootstrap, name)
    selector = selectors.DefaultSelector()
    for index, wire in enumerate(wires):
        selector.register(wire.sock, selectors.EVENT_READ, index)
    in_flight: list[deque[float]] = [deque() for _ in wires]
    latencies: list[float] = []
    failures = 0
    start = time.monotonic()
    schedule = [(start + second + index / groups, index) for second in range(int(seconds)) for index in range(groups)]
    sent = 0
    while sent < len(schedule) or any(in_flight):
        now = time.monotonic()
        if now > start + seconds + DEADLINE_S:
            raise TimeoutError("commit answers missing long after the run")
        while sent < len(schedule) and schedule[sent][0] <= now:
            due, index = schedule[sent]
            wire = wires[index % COMMIT_CONNECTIONS]
            wire.send(ApiKey.OFFSET_COMMIT, 8, commit_request(names[index], int(due - start)))
            in_flight[index % COMMIT_CONNECTIONS].append(time.perf_counter())
            sent += 1
        wait = min(0.05, max(0.0, schedule[sent][0] - now)) if sent < len(schedule) else 0.05
        for key, _ in selector.select(timeout=wait):
            wire = wires[key.data]
            data = wire.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("the broker closed a committer's connection")
            wire.codec.receive_data(data)
            while (response := wire.codec.next_response()) is not None:
                latencies.append((time.perf_counter() - in_flight[key.data].popleft()) * 1000)
                failures += any(p.error_code for t in response.body.topics for p in t.partitions)
    elapsed = time.monotonic() - start
    selector.close()
    for wire in wires:
        wire.sock.close()
    latencies.sort()
    return {"asked_per_s": groups, "achieved_per_s": len(latencies) / elapsed, "failures": failures,
            "p50_ms": percentile(latencies, 0.5), "p99_ms": percentile(latencies, 0.99)}


@dataclass
class GroupScale:
    """One run's figures: seconds per rebalance (by protocol) and the commit load's summary, when measured."""

    members: int
    groups: int
    rebalances: dict[str, dict[str, float]] = field(default_factory=dict)
    commits: dict[str, float] | None = None


def measure(members: int, groups: int, seconds: float, parts: Sequence[str] = PARTS) -> GroupScale:
    """The ``parts`` asked for (all by default), measured on one broker."""
    raise_open_file_limit()
    result = GroupScale(members, groups)
    with tempfile.TemporaryDirectory(prefix="group-scale-") as scratch:
        process = BrokerProcess(Path(scratch), overrides={"group.initial.rebalance.delay.ms": "1000",
                                                          "offsets.topic.num.partitions": "4"})
        with running_broker(process) as broker:
            create_topic(broker.bootstrap, TOPIC, partitions=PARTITIONS, replication_factor=1)
            meta = RawClient(broker.bootstrap, "spate-bench", timeout=60).call(ApiKey.METADATA, 12, MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name=TOPIC)]))
            for group in (f"classic-{members}", f"consumer-{members}"):
                _wait_for_coordinator(broker.bootstrap, group)
            pid = process.process.pid if process.process else None
            if "classic" in parts:
                result.rebalances["classic"] = classic_join_one(broker.bootstrap, members, pid)
            if "consumer" in parts:
                result.rebalances["consumer (KIP-848)"] = consumer_join_one(
                    broker.bootstrap, TOPIC, meta.topics[0].topic_id, members, pid)
            if "commits" in parts:
                result.commits = commit_load(broker.bootstrap, groups, seconds)
    return result


def table(result: GroupScale) -> str:
    members, groups, commits = result.members, result.groups, result.commits
    lines = []
    if result.rebalances:
        lines += ["| protocol | members | one joins: s until all assigned | target | broker CPU s "
                  "| load generator CPU s |", "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {protocol} | {members:,} | {r['seconds']:.2f} | ≤ {REBALANCE_TARGET_S:g} "
                  f"| {r['broker_cpu_s']:.2f} | {r['client_cpu_s']:.2f} |" for protocol, r in result.rebalances.items()]
    if commits is not None:
        lines += ["", "| groups committing each second | commits/s achieved | ratio to asked | failures | p50 ms "
                  "| p99 ms |", "|---:|---:|---:|---:|---:|---:|",
                  f"| {groups:,} | {commits['achieved_per_s']:.0f} | {commits['achieved_per_s'] / groups:.2f} "
                  f"| {commits['failures']:.0f} | {commits['p50_ms']:.2f} | {commits['p99_ms']:.2f} |"]
    return "\n".join(lines).strip("\n")


def run(members: int, groups: int, seconds: float, parts: Sequence[str] = PARTS) -> str:
    """The tables of the ``parts`` asked for (all by default), measured on one broker."""
    return table(measure(members, groups, seconds, parts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=1000, help="members of the rebalancing group")
    parser.add_argument("--groups", type=int, default=1000, help="groups committing once a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the commit run")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=PARTS, metavar="PART",
                        help=f"run only these parts ({', '.join(PARTS)})")
    args = parser.parse_args(argv)
    print(run(args.members, args.groups, args.seconds, args.only), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
