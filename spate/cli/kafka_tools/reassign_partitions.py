"""``kafka-reassign-partitions.sh``: start, verify, cancel and list partition moves.

``--execute``, ``--verify`` and ``--cancel`` read a Kafka reassignment file
(``--reassignment-json-file``, read by ``spate topics reassign``'s code)
and print Kafka's lines: the current assignment to save for a rollback and
"Successfully started partition reassignments for t-0,t-1"; per partition
"Reassignment of partition t-0 is completed." (or "is still in progress.").
``--generate`` (proposing a plan) is not supported.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from spate.cli import reassignment as spate_reassignment
from spate.cli.common import client_errors, open_admin
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, exactly_one, require, run_tool, spate_args
from spate.client import TopicDescription, TopicPartition

PROG = "kafka-reassign-partitions.sh"
ACTIONS = ("execute", "verify", "cancel", "list", "generate")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Move partitions between brokers.")
    for action in ACTIONS:
        parser.add_argument(f"--{action}", action="store_true")
    parser.add_argument("--reassignment-json-file", metavar="FILE")
    parser.add_argument("--topics-to-move-json-file", metavar="FILE")
    parser.add_argument("--broker-list", metavar="ID,ID")
    parser.add_argument("--additional", action="store_true")
    parser.add_argument("--preserve-throttles", action="store_true")
    parser.add_argument("--throttle", type=int, metavar="BYTES/S")
    parser.add_argument("--replica-alter-log-dirs-throttle", type=int, metavar="BYTES/S")
    parser.add_argument("--timeout", type=int, metavar="MS")
    parser.add_argument("--disable-rack-aware", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    action = exactly_one(args, ACTIONS)
    if action == "generate":
        raise ToolUsageError("--generate is not supported; write the reassignment file yourself")
    if action == "list":
        return _list(args)
    path = require(args, "reassignment_json_file", action)
    plan = spate_reassignment.read_plan(path, cancel=action == "cancel")
    if action == "execute" and (args.throttle or args.replica_alter_log_dirs_throttle):
        raise ToolUsageError("--throttle is not supported; replicas copy at full speed")
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        if action == "verify":
            moving = set(spate_reassignment.still_moving(admin, plan))
        else:
            rollback = _rollback(plan, admin.describe_topics(sorted({tp.topic for tp in plan})))
            admin.alter_partition_reassignments(plan)
    names = ",".join(_name(tp) for tp in plan)
    if action == "verify":
        print("Status of partition reassignment:")
        for tp in plan:
            print(f"Reassignment of partition {_name(tp)} is {'still in progress' if tp in moving else 'completed'}.")
        return 0
    if action == "cancel":
        print(f"Successfully cancelled partition reassignments for: {names}")
        return 0
    print("Current partition replica assignment\n")
    print(json.dumps(rollback, separators=(",", ":")))
    print("\nSave this to use as the --reassignment-json-file option during rollback")
    print(f"Successfully started partition reassignments for {names}")
    return 0


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def _rollback(plan: dict[TopicPartition, list[int] | None], current: dict[str, TopicDescription]) -> dict[str, Any]:
    """The plan's partitions with their replicas before the move: the file that undoes it."""
    partitions = []
    for tp in plan:
        described = current[tp.topic].partitions
        if tp.partition >= len(described):
            raise CliError(f"topic '{tp.topic}' has no partition {tp.partition} (it has {len(described)})")
        replicas = list(described[tp.partition].replicas)
        partitions.append({"topic": tp.topic, "partition": tp.partition, "replicas": replicas,
                           "log_dirs": ["any"] * len(replicas)})
    return {"version": 1, "partitions": partitions}


def _list(args: argparse.Namespace) -> int:
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        ongoing = admin.list_partition_reassignments()
    if not ongoing:
        print("No partition reassignments found.")
        return 0
    print("Current partition reassignments:")
    for tp, moving in sorted(ongoing.items()):
        print(f"{_name(tp)}: replicas: {_ids(moving.replicas)}. adding: {_ids(moving.adding_replicas)}. "
              f"removing: {_ids(moving.removing_replicas)}.")
    return 0


def _ids(ids: Sequence[int]) -> str:
    return ",".join(map(str, ids))


def run() -> None:
    sys.exit(run_tool(main))
