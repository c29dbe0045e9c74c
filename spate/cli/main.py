"""The ``spate`` command: one entry point, a subcommand per concern.

Exit codes scripts can rely on: 0 success, 1 a failure reported on stderr,
2 a usage error (argparse's convention), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from spate.cli import (
    acls,
    broker,
    certs,
    cluster,
    configs,
    console,
    consume,
    doctor,
    groups,
    jobs,
    perf,
    produce,
    quotas,
    topics,
    transactions,
    users,
    zookeeper,
)
from spate.cli.errors import CliError

# Each command module exposes ``register(subparsers)`` and sets ``func`` on its parser.
COMMAND_MODULES = (broker, zookeeper, cluster, topics, produce, consume, perf, groups, transactions, certs, users, jobs,
                   console, doctor, acls, quotas, configs)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spate",
        description="Spate: a Kafka-protocol commit log with Spark-native streaming.",
    )
    parser.add_argument("--version", action="version", version=f"spate {_version()}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return func(args)
    except CliError as exc:
        print(f"spate: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spate-platform")
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
