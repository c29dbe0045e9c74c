"""What authorization costs the produce path: records/s with ``authorizer.class.name`` off and on.

    .venv/bin/python -m tests.perf.authorizer_overhead_bench [--records 200000] [--rounds 3]

Starts two broker processes: one without an authorizer, one with Spate's
ACL authorizer holding ``--acls`` unrelated literal topic ACLs plus the one
that lets the benchmark's principal (``User:ANONYMOUS`` on PLAINTEXT, not a
super user) do everything on topics prefixed ``bench-``, so every Produce is
checked against a real ACL set. Each round produces the same records to each
broker in turn, in the shapes of :mod:`tests.perf.metrics_overhead_bench`
(batched, small requests, identical pipelined requests), and prints records/s
and records per broker CPU second, with the ratios on/off (1.0 = no cost).

First it times one cached decision and one uncached decision in this process.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import timeit
from pathlib import Path

from broker_core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker_core.security.authorizer.acl_store import FileAclStore
from broker_core.security.authorizer.authorizer import Authorizer
from tests.perf.metrics_overhead_bench import _row, run_rounds
from tests.support.broker_process import BrokerProcess

PRINCIPAL = "User:ANONYMOUS"


def bench_acls(count: int) -> list[AclBinding]:
    allow_all = AccessControlEntry(PRINCIPAL, "*", AclOperation.ALL, AclPermissionType.ALLOW)
    bindings = [AclBinding(ResourcePattern(ResourceType.TOPIC, "bench-", PatternType.PREFIXED), allow_all)]
    for i in range(count):
        entry = AccessControlEntry(f"User:user-{i}", "*", AclOperation.WRITE, AclPermissionType.ALLOW)
        bindings.append(AclBinding(ResourcePattern(ResourceType.TOPIC, f"other-{i}"), entry))
    return bindings


def decision_us(directory: Path, acls: int) -> tuple[float, float]:
    """(µs per cached decision, µs per uncached decision) in this process."""
    directory.mkdir(parents=True, exist_ok=True)
    authorizer = Authorizer(FileAclStore(directory))
    authorizer.start()
    authorizer.create(bench_acls(acls))
    runs = 100_000

    def cached() -> None:
        authorizer.authorize(PRINCIPAL, "127.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "bench-topic")

    def uncached() -> None:
        authorizer._decide(PRINCIPAL, "127.0.0.1", AclOperation.WRITE, ResourceType.TOPIC, "bench-topic")

    return tuple(min(timeit.repeat(fn, number=runs, repeat=5)) / runs * 1e6 for fn in (cached, uncached))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--acls", type=int, default=1000, help="unrelated ACLs the authorizer holds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="spate-authorizer-bench-") as tmp:
        cached, uncached = decision_us(Path(tmp) / "decisions", args.acls)
        print(f"per decision: {cached:.2f} µs cached, {uncached:.2f} µs uncached ({args.acls + 1} ACLs)")
        on = BrokerProcess(Path(tmp) / "on", overrides={"authorizer.class.name": "spate.security.AclAuthorizer"})
        on.log_dir.mkdir(parents=True)
        FileAclStore(on.log_dir).add(bench_acls(args.acls))
        off = BrokerProcess(Path(tmp) / "off").start()
        on.start()
        try:
            results = run_rounds(off, on, args.records, args.rounds)
        finally:
            off.stop()
            on.stop()
    print(f"\n{args.records} records per run\n")
    print("| shape | round | off: records/s | on: records/s | on/off | off: records per broker CPU s "
          "| on: records per broker CPU s | on/off |")
    print("|---|---|---|---|---|---|---|---|")
    for shape, rows in results.items():
        for index, (off_rates, on_rates) in enumerate(rows, 1):
            print(_row(shape, str(index), off_rates, on_rates))
        paired = [statistics.median(r[1][k] / r[0][k] for r in rows) for k in (0, 1)]
        print(f"| {shape} | median of the rounds' ratios | | | {paired[0]:.3f} | | | {paired[1]:.3f} |")


if __name__ == "__main__":
    main()
