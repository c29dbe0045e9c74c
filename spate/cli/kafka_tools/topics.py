"""``kafka-topics.sh``: create, list, describe, alter (add partitions) and delete topics.

``--topic`` names one topic, or, except with ``--create``, is a regular
expression over the topic names (commas separate alternatives), as Kafka's
tool reads it. ``--list`` prints one name per line, internal topics
included unless ``--exclude-internal``. ``--describe`` prints Kafka's
tab-separated lines::

    Topic: t\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: retention.ms=1000
    \tTopic: t\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\tElr: N/A\tLastKnownElr: N/A

(``TopicId:`` follows the name once the broker reports topic ids.) Creating,
adding partitions and the errors are those of ``spate topics``.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Sequence

from spate.cli import topics as spate_topics
from spate.cli.common import client_errors, open_admin
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import (
    KafkaToolParser,
    ToolUsageError,
    exactly_one,
    require,
    run_tool,
    spate_args,
)
from spate.client import (
    Admin,
    AdminError,
    ConfigEntry,
    ConfigResource,
    KafkaError,
    NewTopic,
    PartitionDescription,
    PartitionReassignment,
    TopicDescription,
    TopicPartition,
    UnsupportedApiError,
)

PROG = "kafka-topics.sh"
ACTIONS = ("create", "list", "describe", "alter", "delete")
MIN_ISR = "min.insync.replicas"


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Create, delete, describe, or change a topic.")
    for action in ACTIONS:
        parser.add_argument(f"--{action}", action="store_true")
    parser.add_argument("--topic", metavar="TOPIC", help="a topic name, or a regular expression except with --create")
    parser.add_argument("--partitions", type=int, metavar="N")
    parser.add_argument("--replication-factor", type=int, metavar="R")
    parser.add_argument("--replica-assignment", metavar="B:B,B:B", help="brokers per partition, e.g. 0:1,1:2")
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--if-exists", action="store_true")
    parser.add_argument("--if-not-exists", action="store_true")
    parser.add_argument("--exclude-internal", action="store_true")
    parser.add_argument("--topics-with-overrides", action="store_true")
    parser.add_argument("--under-replicated-partitions", action="store_true")
    parser.add_argument("--unavailable-partitions", action="store_true")
    parser.add_argument("--under-min-isr-partitions", action="store_true")
    parser.add_argument("--at-min-isr-partitions", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    action = exactly_one(args, ACTIONS)
    if args.config and action != "create":
        raise ToolUsageError(f"--config can only be used with --create; change a topic's configs with "
                             f"kafka-configs.sh --alter --entity-type topics (not --{action})")
    return {"create": _create, "list": _list, "describe": _describe, "alter": _alter, "delete": _delete}[action](args)


# --- create -------------------------------------------------------------------------------------


def _create(args: argparse.Namespace) -> int:
    name = require(args, "topic", "create")
    configs = [_config_pair(text) for text in args.config]
    if args.replication_factor is not None and not 1 <= args.replication_factor <= 32767:
        raise ToolUsageError("The replication factor must be between 1 and 32767 inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise ToolUsageError("The partitions must be greater than 0")
    if args.if_not_exists and _matching(args, name, exact=True):
        return 0
    if args.replica_assignment is None:
        return spate_topics.run_create(spate_args(
            args, name=name, partitions=args.partitions, replication_factor=args.replication_factor, config=configs,
        ))
    if args.partitions is not None or args.replication_factor is not None:
        raise ToolUsageError("--replica-assignment gives partitions and replicas: leave out --partitions and "
                             "--replication-factor")
    topic = NewTopic(name, replica_assignment=replica_assignment(args.replica_assignment), configs=dict(configs))
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        admin.create_topics(topic)
    print(f"Created topic {name}.")
    return 0


def _config_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ToolUsageError('Invalid topic config: all configs to be added must be in the format "key=val".')
    return key.strip(), value.strip()


def replica_assignment(text: str) -> dict[int, list[int]]:
    """``0:1,1:2``: partition 0 on brokers 0 and 1, partition 1 on brokers 1 and 2."""
    assignment: dict[int, list[int]] = {}
    for partition, replicas in enumerate(text.split(",")):
        try:
            brokers = [int(b) for b in replicas.split(":")]
        except ValueError:
            raise ToolUsageError(f"--replica-assignment: not a broker id list: {replicas!r}") from None
        if len(set(brokers)) != len(brokers):
            raise ToolUsageError(f"Partition replica lists may not contain duplicate entries: {replicas}")
        if assignment and len(brokers) != len(assignment[0]):
            raise ToolUsageError(f"Partition {partition} has different replication factor: {brokers}")
        assignment[partition] = brokers
    return assignment


# --- list, describe -----------------------------------------------------------------------------


def _matching(args: argparse.Namespace, pattern: str | None, *, exact: bool = False) -> list[str]:
    """Topic names matching ``--topic`` (a name, or Kafka's include-list regex), sorted."""
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        names = admin.list_topics(include_internal=not args.exclude_internal)
    if pattern is None:
        return names
    if exact or pattern in names:
        return [pattern] if pattern in names else []
    try:
        regex = re.compile(pattern.strip().strip("\"'").replace(",", "|"))
    except re.error as exc:
        raise ToolUsageError(f"--topic {pattern!r} is not a regular expression: {exc}") from None
    return [name for name in names if regex.fullmatch(name)]


def _existing(args: argparse.Namespace) -> list[str]:
    names = _matching(args, args.topic)
    if args.topic and not names and not args.if_exists:
        raise CliError(f"Topic '{args.topic}' does not exist as expected")
    return names


def _list(args: argparse.Namespace) -> int:
    for name in _matching(args, args.topic):
        print(name)
    return 0


def _describe(args: argparse.Namespace) -> int:
    names = _existing(args)
    if not names:
        return 0
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        descriptions = admin.describe_topics(names)
        resources = [ConfigResource.topic(name) for name in names]
        configs = admin.describe_configs(resources)
        moving = _reassignments(admin, descriptions)
    filtering = any((args.under_replicated_partitions, args.unavailable_partitions,
                     args.under_min_isr_partitions, args.at_min_isr_partitions))
    for name in names:
        topic_configs = configs[ConfigResource.topic(name)]
        overrides = [e for e in topic_configs.values() if not e.is_default]
        if args.topics_with_overrides and not overrides:
            continue
        if not filtering:
            print(topic_line(descriptions[name], overrides))
        if args.topics_with_overrides:
            continue
        min_isr = int(getattr(topic_configs.get(MIN_ISR), "value", None) or 1)
        for partition in descriptions[name].partitions:
            if filtering and not _reported(args, partition, min_isr):
                continue
            print(partition_line(name, partition, moving.get(TopicPartition(name, partition.partition))))
    sys.stdout.flush()
    return 0


def _reported(args: argparse.Namespace, partition: PartitionDescription, min_isr: int) -> bool:
    leaderless = partition.leader < 0
    return (
        (args.under_replicated_partitions and len(partition.isr) < len(partition.replicas))
        or (args.unavailable_partitions and leaderless)
        or (args.under_min_isr_partitions and (leaderless or len(partition.isr) < min_isr))
        or (args.at_min_isr_partitions and len(partition.isr) == min_isr)
    )


def _reassignments(
    admin: Admin, descriptions: dict[str, TopicDescription]
) -> dict[TopicPartition, PartitionReassignment]:
    partitions = [TopicPartition(t.name, p.partition) for t in descriptions.values() for p in t.partitions]
    try:
        return admin.list_partition_reassignments(partitions)
    except (UnsupportedApiError, AdminError, KafkaError):
        # As Kafka's tool: a broker that cannot list reassignments still gets its topics described.
        return {}


def topic_line(description: TopicDescription, overrides: list[ConfigEntry]) -> str:
    replication = len(description.partitions[0].replicas) if description.partitions else 0
    shown = sorted(overrides, key=lambda e: e.name)
    configs = ",".join(f"{e.name}={'' if e.value is None else e.value}" for e in shown)
    return (f"Topic: {description.name}\tPartitionCount: {len(description.partitions)}"
            f"\tReplicationFactor: {replication}\tConfigs: {configs}")


def partition_line(topic: str, partition: PartitionDescription, moving: PartitionReassignment | None) -> str:
    def ids(values: Sequence[int]) -> str:
        return ",".join(map(str, values))

    line = (f"\tTopic: {topic}\tPartition: {partition.partition}"
            f"\tLeader: {partition.leader if partition.leader >= 0 else 'none'}"
            f"\tReplicas: {ids(partition.replicas)}\tIsr: {ids(partition.isr)}")
    if moving is not None:
        line += f"\tAdding Replicas: {ids(moving.adding_replicas)}\tRemoving Replicas: {ids(moving.removing_replicas)}"
    return line + "\tElr: N/A\tLastKnownElr: N/A"


# --- alter, delete ------------------------------------------------------------------------------


def _alter(args: argparse.Namespace) -> int:
    require(args, "topic", "alter")
    partitions = require(args, "partitions", "alter")
    if args.replication_factor is not None:
        raise ToolUsageError("--replication-factor cannot be changed with --alter; use kafka-reassign-partitions.sh")
    for name in _existing(args):
        spate_topics.run_add_partitions(spate_args(args, name=name, partitions=partitions))
    return 0


def _delete(args: argparse.Namespace) -> int:
    require(args, "topic", "delete")
    names = _existing(args)
    if names:
        with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
            admin.delete_topics(names)
    return 0


def run() -> None:
    sys.exit(run_tool(main))
