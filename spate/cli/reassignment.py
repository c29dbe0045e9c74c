"""``spate topics reassign``: move partitions to other brokers, cancel a move, list the moves in progress.

One partition from the command line (``--topic T --partition P --replicas
1,2,3``, or ``--cancel``), or many from a file in the format of Kafka's
``kafka-reassign-partitions.sh``::

    {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2]}]}

(``log_dirs`` entries are accepted and ignored; with ``--cancel`` the
``replicas`` may be left out). The brokers accept the moves at once and the
controller carries them out; ``--wait`` waits, at most ``--wait-timeout-ms``,
until no listed partition is moving any more and each has its new replicas
(a progress bar on stderr when it is a terminal). ``--list`` shows the moves
in progress.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Mapping

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    console,
    non_negative_int,
    open_admin,
    print_json,
    stderr_is_terminal,
)
from spate.cli.errors import CliError
from spate.client import Admin, TopicPartition

USAGE = 2
DEFAULT_WAIT_TIMEOUT_MS = 300_000
_WAIT_POLL_S = 0.5

# A partition's new replicas, or None to cancel its move.
Plan = dict[TopicPartition, list[int] | None]


def register(commands: argparse._SubParsersAction) -> None:
    reassign = commands.add_parser(
        "reassign", help="move partitions to other brokers, cancel a move, or list the moves in progress",
        description="Move a partition (--topic, --partition, --replicas) or the partitions of a Kafka-format "
        "reassignment file (--reassignment-json-file) to new replicas; --cancel stops their moves instead; "
        "--list shows the moves in progress.",
    )
    reassign.add_argument("--topic", metavar="TOPIC")
    reassign.add_argument("--partition", type=non_negative_int, metavar="P")
    reassign.add_argument("--replicas", type=broker_ids, metavar="ID,ID,...",
                          help="the new replicas, preferred leader first")
    reassign.add_argument("--reassignment-json-file", metavar="FILE",
                          help='{"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]}')
    reassign.add_argument("--cancel", action="store_true", help="cancel the move of the partition(s) named")
    reassign.add_argument("--list", action="store_true", help="list the moves in progress (of --topic only, if given)")
    reassign.add_argument("--wait", action="store_true", help="wait until the moves are done")
    reassign.add_argument("--wait-timeout-ms", type=non_negative_int, default=DEFAULT_WAIT_TIMEOUT_MS, metavar="MS",
                          help=f"how long --wait waits (default: {DEFAULT_WAIT_TIMEOUT_MS})")
    add_connection_arguments(reassign)
    add_output_argument(reassign)
    reassign.set_defaults(func=run_reassign)


def broker_ids(text: str) -> list[int]:
    """``1,2,3``: distinct broker ids."""
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected broker ids like 1,2,3, not {text!r}") from None
    problem = _replicas_problem(ids)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return ids


def _replicas_problem(ids: list[int]) -> str | None:
    if not ids:
        return "the replicas may not be empty"
    if any(i < 0 for i in ids):
        return f"broker ids are not negative: {ids}"
    if len(set(ids)) != len(ids):
        return f"a broker may hold only one replica of a partition: {ids}"
    return None


def read_plan(path: str, cancel: bool) -> Plan:
    """The partitions of a Kafka reassignment file, with their new replicas (None for all when ``cancel``)."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CliError(f"{path} is not JSON: {exc}", exit_code=USAGE) from None
    return plan_from_document(document, cancel, path)


def plan_from_document(document: Any, cancel: bool, source: str = "the reassignment") -> Plan:
    def invalid(detail: str) -> CliError:
        return CliError(f"{source}: {detail}", exit_code=USAGE)

    if not isinstance(document, dict) or not isinstance(document.get("partitions"), list):
        raise invalid('expected {"version": 1, "partitions": [...]}')
    if document.get("version", 1) != 1:
        raise invalid(f"version {document.get('version')!r} is not supported (only 1)")
    plan: Plan = {}
    for index, entry in enumerate(document["partitions"]):
        where = f"partitions[{index}]"
        if not isinstance(entry, dict):
            raise invalid(f"{where} is not an object")
        topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise invalid(f"{where} has no topic")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise invalid(f"{where} has no partition number")
        tp = TopicPartition(topic, partition)
        if tp in plan:
            raise invalid(f"{tp} is listed twice")
        if cancel:
            plan[tp] = None
            continue
        if not isinstance(replicas, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in replicas):
            raise invalid(f"{where} ({tp}) needs replicas: a list of broker ids")
        problem = _replicas_problem(replicas)
        if problem:
            raise invalid(f"{where} ({tp}): {problem}")
        plan[tp] = list(replicas)
    if not plan:
        raise invalid("no partitions listed")
    return plan


def _plan_from_args(args: argparse.Namespace) -> Plan:
    if args.reassignment_json_file is not None:
        if args.topic is not None or args.partition is not None or args.replicas is not None:
            raise CliError("--reassignment-json-file names the partitions: leave out --topic, --partition and "
                           "--replicas", exit_code=USAGE)
        return read_plan(args.reassignment_json_file, args.cancel)
    if args.topic is None or args.partition is None:
        raise CliError("name a partition (--topic and --partition), give --reassignment-json-file, or --list",
                       exit_code=USAGE)
    if args.cancel == (args.replicas is not None):
        raise CliError("give either --replicas or --cancel", exit_code=USAGE)
    return {TopicPartition(args.topic, args.partition): None if args.cancel else args.replicas}


def run_reassign(args: argparse.Namespace) -> int:
    if args.list:
        if args.replicas is not None or args.cancel or args.reassignment_json_file is not None or args.wait:
            raise CliError("--list only lists: leave out --replicas, --cancel, --reassignment-json-file and --wait",
                           exit_code=USAGE)
        return _run_list(args)
    if args.partition is not None and args.topic is None:
        raise CliError("--partition needs --topic", exit_code=USAGE)
    plan = _plan_from_args(args)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.alter_partition_reassignments(plan)
        if args.wait:
            _wait_until_done(admin, plan, args.wait_timeout_ms / 1000)
    if args.output == "json":
        print_json({
            "reassignments": [{"topic": tp.topic, "partition": tp.partition, "replicas": replicas}
                              for tp, replicas in plan.items()],
            "completed": True if args.wait else None,
        })
        return 0
    for tp, replicas in plan.items():
        print(f"Cancelled the reassignment of {tp}." if replicas is None
              else f"Started reassigning {tp} to replicas {','.join(map(str, replicas))}.")
    if args.wait:
        print(f"Reassignment of {len(plan)} partition(s) complete.")
    return 0


def _run_list(args: argparse.Namespace) -> int:
    if args.partition is not None and args.topic is None:
        raise CliError("--partition needs --topic", exit_code=USAGE)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        ongoing = admin.list_partition_reassignments()
    shown = {tp: r for tp, r in ongoing.items()
             if (args.topic is None or tp.topic == args.topic) and (args.partition is None or tp.partition == args.partition)}
    if args.output == "json":
        print_json({"reassignments": [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(r.replicas),
             "adding_replicas": list(r.adding_replicas), "removing_replicas": list(r.removing_replicas)}
            for tp, r in shown.items()
        ]})
        return 0
    if not shown:
        print("No reassignment in progress.")
        return 0
    table = Table("Topic", "Partition", "Replicas", "Adding", "Removing", title="Reassignments in progress")
    for tp, r in shown.items():
        table.add_row(tp.topic, str(tp.partition), _ids(r.replicas), _ids(r.adding_replicas), _ids(r.removing_replicas))
    console().print(table)
    return 0


def _ids(ids: Any) -> str:
    return ",".join(map(str, ids))


# --- waiting ---------------------------------------------------------------------------------------


def _wait_until_done(admin: Admin, plan: Mapping[TopicPartition, list[int] | None], timeout: float) -> None:
    """Poll until no partition of ``plan`` is moving and each has its new replicas; CliError after ``timeout``."""
    deadline = time.monotonic() + timeout
    progress = _progress(len(plan))
    try:
        while True:
            pending = still_moving(admin, plan)
            if progress is not None:
                progress.update(progress.task_ids[0], completed=len(plan) - len(pending))
            if not pending:
                return
            if time.monotonic() >= deadline:
                names = ", ".join(str(tp) for tp in pending)
                raise CliError(f"{len(pending)} of {len(plan)} partition(s) still moving after {timeout:g}s: {names}")
            time.sleep(_WAIT_POLL_S)
    finally:
        if progress is not None:
            progress.stop()


def still_moving(admin: Admin, plan: Mapping[TopicPartition, list[int] | None]) -> list[TopicPartition]:
    ongoing = admin.list_partition_reassignments(plan)
    topics = admin.describe_topics(sorted({tp.topic for tp in plan}))
    pending = []
    for tp, replicas in plan.items():
        partitions = topics[tp.topic].partitions
        current = partitions[tp.partition].replicas if tp.partition < len(partitions) else None
        if tp in ongoing or (replicas is not None and current != tuple(replicas)):
            pending.append(tp)
    return pending


def _progress(total: int) -> Progress | None:
    if not stderr_is_terminal():
        return None
    progress = Progress(TextColumn("partitions moved"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(file=sys.stderr), transient=True)
    progress.add_task("reassign", total=total)
    progress.start()
    return progress
