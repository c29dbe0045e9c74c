"""``spate topics ...``: create, list, describe, delete, alter-config, add-partitions, reassign, elect-leaders.

``list`` prints one name per line so scripts can read it; ``describe`` prints
tables of partitions (leader, replicas, ISR, offline replicas, log start and
end offsets, the size of the leader's log on disk, and the topic's total) and
of the configs that differ from the broker's defaults, or
with ``--output json`` the same as one JSON document. ``alter-config`` changes
single keys with IncrementalAlterConfigs where the broker serves it, else it
rewrites the topic's overrides with AlterConfigs. ``reassign`` and
``elect-leaders`` live in :mod:`spate.cli.reassignment` and
:mod:`spate.cli.leader_election`.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from spate.cli import leader_election, reassignment
from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    client_security,
    command_group,
    config_map,
    console,
    key_value,
    open_admin,
    positive_int,
    print_json,
)
from spate.cli.errors import CliError
from spate.client import (
    EARLIEST,
    LATEST,
    Admin,
    AlterConfigOp,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    TopicDescription,
    TopicPartition,
    UnsupportedApiError,
)
from spate.client.admin.archive_offsets import ArchiveOffsetsClient
from spate.protocol import KafkaError


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "topics", "create, list, describe, alter and delete topics")

    create = commands.add_parser("create", help="create a topic")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--partitions", type=positive_int, metavar="N", help="default: the broker's num.partitions")
    create.add_argument("--replication-factor", type=positive_int, metavar="R",
                        help="default: the broker's default.replication.factor")
    create.add_argument("--config", type=key_value, action="append", metavar="KEY=VALUE",
                        help="a topic config (e.g. retention.ms=86400000); repeatable")
    create.set_defaults(func=run_create)

    listing = commands.add_parser("list", help="list topic names, one per line")
    listing.add_argument("--include-internal", action="store_true", help="also list __consumer_offsets and the like")
    listing.set_defaults(func=run_list)

    describe = commands.add_parser("describe", help="partitions, offsets and non-default configs of a topic")
    describe.add_argument("name", metavar="NAME")
    describe.set_defaults(func=run_describe)

    delete = commands.add_parser("delete", help="delete a topic and its data")
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(func=run_delete)

    alter = commands.add_parser(
        "alter-config", help="set or remove topic configs",
        description="Set (--config) or remove (--delete-config) topic configs; other overrides are kept.",
    )
    alter.add_argument("name", metavar="NAME")
    alter.add_argument("--config", type=key_value, action="append", metavar="KEY=VALUE", help="repeatable")
    alter.add_argument("--delete-config", action="append", default=[], metavar="KEY",
                       help="return a config to its default; repeatable")
    alter.set_defaults(func=run_alter_config)

    grow = commands.add_parser("add-partitions", help="grow a topic to a larger number of partitions")
    grow.add_argument("name", metavar="NAME")
    grow.add_argument("--partitions", type=positive_int, required=True, metavar="N", help="the new total")
    grow.set_defaults(func=run_add_partitions)

    for parser in (create, listing, describe, delete, alter, grow):
        add_connection_arguments(parser)
        add_output_argument(parser)
    reassignment.register(commands)
    leader_election.register(commands)


def run_create(args: argparse.Namespace) -> int:
    topic = NewTopic(
        args.name,
        num_partitions=args.partitions or -1,
        replication_factor=args.replication_factor or -1,
        configs=config_map(args.config),
    )
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.create_topics(topic)
    _done(args, {"created": args.name}, f"Created topic {args.name}.")
    return 0


def run_list(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        names = admin.list_topics(include_internal=args.include_internal)
    if args.output == "json":
        print_json({"topics": names})
        return 0
    for name in names:
        print(name)
    return 0


ARCHIVE_PATH_CONFIG = "spate.archive.path"


def run_describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        description = admin.describe_topics([args.name])[args.name]
        # A partition with no leader has no offsets to ask for: it shows "?" rather than stalling the rest.
        partitions = [TopicPartition(args.name, p.partition) for p in description.partitions if p.leader >= 0]
        starts = admin.list_offsets({tp: EARLIEST for tp in partitions})
        ends = admin.list_offsets({tp: LATEST for tp in partitions})
        configs = admin.describe_configs(ConfigResource.topic(args.name))[ConfigResource.topic(args.name)]
        sizes = _log_sizes(admin, partitions)
    overrides = sorted((e for e in configs.values() if not e.is_default), key=lambda e: e.name)
    archive_entry = configs.get(ARCHIVE_PATH_CONFIG)
    lags = _archive_lags(args, partitions) if archive_entry is not None and archive_entry.value else {}
    if args.output == "json":
        document = _describe_document(description, starts, ends, overrides, sizes)
        if archive_entry is not None and archive_entry.value:
            for row in document["partitions"]:
                row["archive_lag"] = lags.get(TopicPartition(args.name, row["partition"]))
        print_json(document)
        return 0

    out = console()
    out.print(f"Topic: {description.name}  Partitions: {len(description.partitions)}  "
              f"Replication factor: {len(description.partitions[0].replicas) if description.partitions else 0}"
              + ("  Internal" if description.is_internal else ""))
    table = Table("Partition", "Leader", "Replicas", "ISR", "Offline", "Log start", "Log end", "Size (bytes)",
                  title="Partitions")
    if lags:
        table.add_column("Archive lag")
    for p in description.partitions:
        tp = TopicPartition(args.name, p.partition)
        archive_cells = [str(lags[tp]) if tp in lags else "?"] if lags else []
        table.add_row(
            str(p.partition),
            str(p.leader) if p.leader >= 0 else "none",
            ",".join(map(str, p.replicas)),
            ",".join(map(str, p.isr)),
            ",".join(map(str, p.offline_replicas)),
            _offset(starts.get(tp)),
            _offset(ends.get(tp)),
            str(sizes[tp]) if tp in sizes else "?",
            *archive_cells,
        )
    out.print(table)
    if sizes:
        total = sum(sizes.values())
        out.print(f"Size on disk: {total} bytes ({_readable(total)})"
                  + ("" if len(sizes) == len(description.partitions) else ", partitions without a size left out"))
    if overrides:
        config_table = Table("Config", "Value", "Source", title="Configs (not defaults)")
        for entry in overrides:
            config_table.add_row(entry.name, _shown_value(entry), entry.source.name)
        out.print(config_table)
    else:
        out.print("Configs: all defaults")
    return 0


def _archive_lags(args: argparse.Namespace, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
    """Records per partition that retention keeps only because they are not archived yet ({} if unknown)."""
    if not partitions:
        return {}
    try:
        with ArchiveOffsetsClient(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
                                  request_timeout_ms=args.api_timeout_ms, client_id="spate-cli",
                                  **client_security(args)) as archive:
            return {tp: state.archive_lag for tp, state in archive.describe(partitions).items()}
    except (UnsupportedApiError, KafkaError):
        return {}


def _log_sizes(admin: Admin, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's size on its leader's disk (DescribeLogDirs; {} from a broker that does not serve it)."""
    if not partitions:
        return {}
    try:
        return admin.partition_sizes(partitions)
    except (UnsupportedApiError, KafkaError):
        return {}


def _readable(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _shown_value(entry: ConfigEntry) -> str:
    return "(sensitive)" if entry.is_sensitive else ("" if entry.value is None else entry.value)


def _describe_document(
    description: TopicDescription, starts: dict[TopicPartition, Any], ends: dict[TopicPartition, Any],
    overrides: list[ConfigEntry], sizes: dict[TopicPartition, int],
) -> dict[str, Any]:
    def offset(found: object) -> int | None:
        value = getattr(found, "offset", None)
        return None if value is None or value < 0 else value

    return {
        "name": description.name,
        "internal": description.is_internal,
        "partitions": [
            {
                "partition": p.partition, "leader": p.leader if p.leader >= 0 else None,
                "leader_epoch": p.leader_epoch, "replicas": list(p.replicas), "isr": list(p.isr),
                "offline_replicas": list(p.offline_replicas),
                "log_start_offset": offset(starts.get(TopicPartition(description.name, p.partition))),
                "log_end_offset": offset(ends.get(TopicPartition(description.name, p.partition))),
                "size_bytes": sizes.get(TopicPartition(description.name, p.partition)),
            }
            for p in description.partitions
        ],
        "size_bytes": sum(sizes.values()) if sizes else None,
        "configs": {e.name: {"value": None if e.is_sensitive else e.value, "source": e.source.name,
                             "sensitive": e.is_sensitive} for e in overrides},
    }


def _offset(found: object) -> str:
    offset = getattr(found, "offset", None)
    return "?" if offset is None or offset < 0 else str(offset)


def run_delete(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.delete_topics(args.name)
    _done(args, {"deleted": args.name}, f"Deleted topic {args.name}.")
    return 0


def run_alter_config(args: argparse.Namespace) -> int:
    updates = config_map(args.config)
    if not updates and not args.delete_config:
        raise CliError("nothing to change: give --config KEY=VALUE or --delete-config KEY", exit_code=2)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        api = alter_topic_configs(admin, args.name, updates, args.delete_config)
    if args.output == "json":
        print_json({"topic": args.name, "set": updates, "deleted": list(args.delete_config), "api": api})
    else:
        print(f"Updated configs of topic {args.name}.")
    return 0


def alter_topic_configs(admin: Admin, topic: str, updates: dict[str, str], deleted: list[str]) -> str:
    """Set ``updates`` and return ``deleted`` to their defaults; the name of the API that did it.

    IncrementalAlterConfigs where the broker serves it, else AlterConfigs over the current overrides.
    """
    resource = ConfigResource.topic(topic)
    changes = [AlterConfigOp(k, v) for k, v in updates.items()]
    changes += [AlterConfigOp(k, op=AlterConfigOp.OpType.DELETE) for k in deleted]
    try:
        admin.incremental_alter_configs({resource: changes})
        return "IncrementalAlterConfigs"
    except UnsupportedApiError:
        _replace_overrides(admin, resource, updates, deleted)
        return "AlterConfigs"


def _replace_overrides(admin: Admin, resource: ConfigResource, updates: dict[str, str], deleted: list[str]) -> None:
    """The older way: AlterConfigs replaces the whole override set, so start from the current overrides."""
    current = admin.describe_configs(resource)[resource]
    unknown = [key for key in deleted if key not in current]
    if unknown:
        raise CliError(f"topic {resource.name!r} has no config {unknown[0]!r}")
    overrides: dict[str, str | None] = {
        name: entry.value for name, entry in current.items()
        if entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG and not entry.is_sensitive
    }
    overrides.update(updates)
    for key in deleted:
        overrides.pop(key, None)
    admin.alter_configs({resource: overrides})


def run_add_partitions(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        description = admin.describe_topics([args.name])[args.name]
        if args.partitions <= len(description.partitions):
            raise CliError(
                f"topic {args.name!r} already has {len(description.partitions)} partitions; "
                f"--partitions must be larger"
            )
        admin.create_partitions({args.name: args.partitions})
    _done(args, {"topic": args.name, "partitions": args.partitions},
          f"Topic {args.name} now has {args.partitions} partitions.")
    return 0


def _done(args: argparse.Namespace, document: dict[str, object], line: str) -> None:
    """What a command changed: ``line``, or ``document`` with ``--output json``."""
    if args.output == "json":
        print_json(document)
    else:
        print(line)
