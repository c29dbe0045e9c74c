"""``kafka-configs.sh``: describe and alter the configs of topics and brokers.

The entity is ``--entity-type topics|brokers`` with ``--entity-name``
(or ``--entity-default`` for every broker), or the shorthands ``--topic``,
``--broker`` and ``--broker-defaults``. ``--describe`` prints Kafka's
lines, the dynamic configs unless ``--all``::

    Dynamic configs for topic t are:
      retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}

``--alter`` takes ``--add-config k1=v1,k2=[a,b]`` (a list value in
brackets) and ``--delete-config k1,k2``; topics change through ``spate
topics alter-config``'s code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from spate.cli import topics as spate_topics
from spate.cli.common import client_errors, open_admin
from spate.cli.kafka_tools.tool import (
    KafkaToolParser,
    ToolUsageError,
    exactly_one,
    read_properties,
    run_tool,
    spate_args,
)
from spate.client import AlterConfigOp, ConfigEntry, ConfigResource, ConfigSource

PROG = "kafka-configs.sh"
ACTIONS = ("describe", "alter")
ENTITY_TYPES = ("topics", "brokers")
KAFKA_ONLY_ENTITY_TYPES = ("clients", "users", "ips", "broker-loggers", "groups", "client-metrics")
DYNAMIC_SOURCES = {
    "topics": (ConfigSource.DYNAMIC_TOPIC_CONFIG,),
    "brokers": (ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
}


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Describe or change the configs of topics and brokers.")
    for action in ACTIONS:
        parser.add_argument(f"--{action}", action="store_true")
    parser.add_argument("--entity-type", action="append", default=[], metavar="TYPE")
    parser.add_argument("--entity-name", action="append", default=[], metavar="NAME")
    parser.add_argument("--entity-default", action="store_true")
    parser.add_argument("--topic", metavar="TOPIC")
    parser.add_argument("--broker", metavar="ID")
    parser.add_argument("--broker-defaults", action="store_true")
    parser.add_argument("--add-config", metavar="K1=V1,K2=[A,B]")
    parser.add_argument("--add-config-file", metavar="FILE")
    parser.add_argument("--delete-config", metavar="K1,K2")
    parser.add_argument("--all", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    action = exactly_one(args, ACTIONS)
    entity_type, name = _entity(args)
    if action == "describe":
        return _describe(args, entity_type, name)
    return _alter(args, entity_type, name)


def _entity(args: argparse.Namespace) -> tuple[str, str | None]:
    """The entity type and name (None: every entity of the type; "" for brokers: the cluster default)."""
    if args.topic is not None:
        return "topics", args.topic
    if args.broker is not None:
        return "brokers", args.broker
    if args.broker_defaults:
        return "brokers", ""
    if len(args.entity_type) != 1:
        raise ToolUsageError("exactly one --entity-type is needed (or --topic, --broker, --broker-defaults)")
    entity_type = args.entity_type[0]
    if entity_type in KAFKA_ONLY_ENTITY_TYPES:
        raise ToolUsageError(f"--entity-type {entity_type} is not supported; Spate keeps configs of topics and brokers")
    if entity_type not in ENTITY_TYPES:
        raise ToolUsageError(f"--entity-type must be one of {', '.join(ENTITY_TYPES)}, not {entity_type!r}")
    if len(args.entity_name) > 1:
        raise ToolUsageError("give at most one --entity-name")
    if args.entity_default:
        if entity_type != "brokers":
            raise ToolUsageError("--entity-default is only valid with --entity-type brokers")
        return entity_type, ""
    return entity_type, args.entity_name[0] if args.entity_name else None


def _resource(entity_type: str, name: str) -> ConfigResource:
    return ConfigResource.topic(name) if entity_type == "topics" else ConfigResource.broker(name)


def _label(entity_type: str, name: str) -> str:
    return f"{entity_type[:-1]} {name}"


# --- describe -----------------------------------------------------------------------------------


def _describe(args: argparse.Namespace, entity_type: str, name: str | None) -> int:
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        if name is not None:
            names = [name]
        elif entity_type == "topics":
            names = admin.list_topics()
        else:
            names = [str(b.node_id) for b in admin.describe_cluster().brokers]
        described = admin.describe_configs([_resource(entity_type, n) for n in names], include_synonyms=True)
    for each in names:
        entries = described[_resource(entity_type, each)].values()
        if not args.all:
            entries = [e for e in entries if e.source in DYNAMIC_SOURCES[entity_type]]
        if entity_type == "brokers" and each == "":
            print("Default configs for brokers in the cluster are:")
        else:
            print(f"{'All' if args.all else 'Dynamic'} configs for {_label(entity_type, each)} are:")
        for entry in sorted(entries, key=lambda e: e.name):
            print(f"  {config_line(entry)}")
    return 0


def config_line(entry: ConfigEntry) -> str:
    synonyms = ", ".join(f"{source.name}:{name}={_value(value)}" for name, value, source in entry.synonyms)
    return f"{entry.name}={_value(entry.value)} sensitive={str(entry.is_sensitive).lower()} synonyms={{{synonyms}}}"


def _value(value: str | None) -> str:
    return "null" if value is None else value


# --- alter --------------------------------------------------------------------------------------


def _alter(args: argparse.Namespace, entity_type: str, name: str | None) -> int:
    if name is None:
        raise ToolUsageError("--alter needs an entity: --entity-name NAME (or --entity-default for brokers)")
    updates = parse_config_list(args.add_config) if args.add_config else {}
    if args.add_config_file:
        updates.update(read_properties(args.add_config_file))
    deleted = [key.strip() for key in (args.delete_config or "").split(",") if key.strip()]
    if not updates and not deleted:
        raise ToolUsageError("--alter needs --add-config, --add-config-file or --delete-config")
    overlap = sorted(set(updates) & set(deleted))
    if overlap:
        raise ToolUsageError(f"config(s) {', '.join(overlap)} are both added and deleted")
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server):
        if entity_type == "topics":
            spate_topics.alter_topic_configs(admin, name, updates, deleted)
        else:
            changes = [AlterConfigOp(k, v) for k, v in updates.items()]
            changes += [AlterConfigOp(k, op=AlterConfigOp.OpType.DELETE) for k in deleted]
            admin.incremental_alter_configs({ConfigResource.broker(name): changes})
    if entity_type == "brokers" and name == "":
        print("Completed updating default config for brokers in the cluster.")
    else:
        print(f"Completed updating config for {_label(entity_type, name)}.")
    return 0


def parse_config_list(text: str) -> dict[str, str]:
    """``k1=v1,k2=[a,b]``: commas inside brackets belong to the value, the brackets do not."""
    pairs: dict[str, str] = {}
    for item in _split_outside_brackets(text):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ToolUsageError(f"--add-config: expected KEY=VALUE, not {item!r}")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        pairs[key.strip()] = value
    return pairs


def _split_outside_brackets(text: str) -> list[str]:
    items, current, depth = [], [], 0
    for char in text:
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        current.append(char)
    items.append("".join(current))
    return [item for item in items if item.strip()]


def run() -> None:
    sys.exit(run_tool(main))
