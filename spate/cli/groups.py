"""``spate groups ...``: list, describe, reset-offsets and delete consumer groups.

``describe`` shows, per partition the group consumes or has committed, the
committed offset, the log end offset and the lag between them, with the
member that owns the partition. ``reset-offsets`` prints its plan and
changes nothing unless given ``--execute``; like Kafka's tool it refuses a
group that has members, since their next commit would undo the reset.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Iterator

from rich.table import Table

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    client_security,
    command_group,
    console,
    print_json,
)
from spate.cli.errors import CliError
from spate.client import EARLIEST, LATEST, Admin, AdminError, ErrorCode, TopicPartition
from spate.client.admin.admin_types import GroupDescription, MemberDescription

NONE_SHOWN = "-"


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "groups", "list, describe, reset and delete consumer groups")

    listing = commands.add_parser("list", help="list group ids, one per line")
    listing.set_defaults(func=run_list)

    describe = commands.add_parser("describe", help="state, members, committed offsets and lag of a group")
    describe.add_argument("group", metavar="GROUP")
    describe.set_defaults(func=run_describe)

    reset = commands.add_parser(
        "reset-offsets", help="move a group's committed offsets (dry run unless --execute)",
        description="Compute new committed offsets for the group on the given topics and print them; "
                    "with --execute, commit them. The group must have no active members.",
    )
    reset.add_argument("group", metavar="GROUP")
    reset.add_argument("--topic", action="append", required=True, type=topic_spec, metavar="TOPIC[:P,P...]",
                       help="a topic, optionally with a comma-separated list of partitions; repeatable")
    mode = reset.add_mutually_exclusive_group(required=True)
    mode.add_argument("--to-earliest", action="store_true", help="the first offset still in the log")
    mode.add_argument("--to-latest", action="store_true", help="the log end offset (skip everything)")
    mode.add_argument("--to-offset", type=offset_value, metavar="N", help="offset N, kept within the log")
    mode.add_argument("--to-datetime", type=iso_datetime, metavar="ISO8601",
                      help="the first record at or after this time (no zone: local time)")
    mode.add_argument("--shift-by", type=signed_int, metavar="N", help="move the committed offset by N (may be negative)")
    run_mode = reset.add_mutually_exclusive_group()
    run_mode.add_argument("--execute", action="store_true", help="commit the new offsets")
    run_mode.add_argument("--dry-run", action="store_true", help="only print the plan (the default)")
    reset.set_defaults(func=run_reset_offsets)

    delete = commands.add_parser("delete", help="delete empty groups and their committed offsets")
    delete.add_argument("group", nargs="+", metavar="GROUP")
    delete.set_defaults(func=run_delete)

    for parser in (listing, describe, reset, delete):
        add_connection_arguments(parser)
        add_output_argument(parser)


# --- argument types -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: tuple[int, ...] | None  # None: every partition


def topic_spec(text: str) -> TopicSpec:
    name, sep, rest = text.partition(":")
    if not name.strip():
        raise argparse.ArgumentTypeError(f"expected TOPIC or TOPIC:P,P..., not {text!r}")
    if not sep:
        return TopicSpec(name.strip(), None)
    try:
        partitions = tuple(sorted({int(p) for p in rest.split(",")}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"partitions must be comma-separated integers, not {rest!r}") from None
    if any(p < 0 for p in partitions):
        raise argparse.ArgumentTypeError(f"partitions cannot be negative: {rest!r}")
    return TopicSpec(name.strip(), partitions)


def signed_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def offset_value(text: str) -> int:
    value = signed_int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"an offset cannot be negative: {text!r}")
    return value


def iso_datetime(text: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 date-time; one without a zone is local time."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 date-time (e.g. 2024-05-01T12:00:00Z): {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


# --- commands -----------------------------------------------------------------------------------


@contextlib.contextmanager
def group_session(args: argparse.Namespace) -> Iterator[Admin]:
    with client_errors(args.bootstrap_server):
        admin = Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
                      request_timeout_ms=args.api_timeout_ms, client_id="spate-cli", **client_security(args))
        try:
            with _group_errors():
                yield admin
        finally:
            admin.close()


@contextlib.contextmanager
def _group_errors() -> Iterator[None]:
    """Group failures in the words of the group tool; everything else is left to client_errors."""
    try:
        yield
    except AdminError as exc:
        lines = []
        for resource, error in exc.errors.items():
            if error.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                topic = resource.topic if isinstance(resource, TopicPartition) else resource
                lines.append(f"topic {topic!r} does not exist")
            elif error.code in (ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.NON_EMPTY_GROUP,
                                ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION,
                                ErrorCode.REBALANCE_IN_PROGRESS):
                lines.append(error.message or error.code.name)
            else:
                lines.append(f"{resource}: {error.code.name}")
        raise CliError("; ".join(dict.fromkeys(lines))) from None


def run_list(args: argparse.Namespace) -> int:
    with group_session(args) as admin:
        listings = admin.list_groups()
    if args.output == "json":
        print_json({"groups": [listing.group_id for listing in listings]})
        return 0
    for listing in listings:
        print(listing.group_id)
    return 0


@dataclass(frozen=True)
class PartitionLag:
    """One partition a group consumes or has committed: offsets, lag and the member that owns it."""

    partition: TopicPartition
    current: int | None
    end: int | None
    owner: MemberDescription | None

    @property
    def lag(self) -> int | None:
        return max(0, self.end - self.current) if self.current is not None and self.end is not None else None


def describe_group_lag(admin: Admin, group_id: str) -> tuple[GroupDescription, list[PartitionLag]]:
    """The group (CliError if it does not exist) and its partitions in order, with their lag."""
    description = _existing_group(admin, group_id)
    committed = admin.list_group_offsets(group_id)
    owners: dict[TopicPartition, MemberDescription] = {tp: m for m in description.members for tp in m.assignment}
    partitions = sorted(set(committed) | set(owners))
    end_offsets = _end_offsets(admin, partitions)
    rows = [
        PartitionLag(tp, committed[tp].offset if tp in committed else None, end_offsets.get(tp), owners.get(tp))
        for tp in partitions
    ]
    return description, rows


def run_describe(args: argparse.Namespace) -> int:
    with group_session(args) as admin:
        description, rows = describe_group_lag(admin, args.group)
    if args.output == "json":
        print_json(describe_document(description, rows))
        return 0

    out = console()
    out.print(f"Group: {description.group_id}  State: {description.state}  Members: {len(description.members)}"
              f"  Assignor: {description.protocol or NONE_SHOWN}", soft_wrap=True)
    table = Table("TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
    for row in rows:
        owner = row.owner
        table.add_row(
            row.partition.topic, str(row.partition.partition), _shown(row.current), _shown(row.end), _shown(row.lag),
            owner.member_id if owner else NONE_SHOWN,
            (owner.host or NONE_SHOWN) if owner else NONE_SHOWN,
            owner.client_id if owner else NONE_SHOWN,
        )
    if rows:
        out.print(table)
    else:
        out.print("No committed offsets and no assigned partitions.")
    # Members that own nothing (between rebalances, or more members than partitions) are still worth seeing.
    idle = [m for m in description.members if not m.assignment]
    for member in idle:
        out.print(f"Member without partitions: {member.member_id} ({member.client_id}, {member.host or NONE_SHOWN})",
                  soft_wrap=True)
    return 0


def describe_document(description: GroupDescription, rows: list[PartitionLag]) -> dict[str, object]:
    """``groups describe --output json``: the group, its members and each partition's offsets and lag."""
    return {
        "group": description.group_id, "state": description.state, "protocol": description.protocol or None,
        "members": [{"member_id": m.member_id, "client_id": m.client_id, "host": m.host or None,
                     "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(m.assignment)]}
                    for m in description.members],
        "partitions": [{"topic": row.partition.topic, "partition": row.partition.partition,
                        "current_offset": row.current, "log_end_offset": row.end, "lag": row.lag,
                        "member_id": row.owner.member_id if row.owner else None} for row in rows],
    }


def reset_group_offsets(
    admin: Admin, args: argparse.Namespace
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    """The committed and new offsets of the partitions ``args.topic`` names; commits them with ``args.execute``.

    ``args`` carries ``group``, ``topic`` (TopicSpecs), one of ``to_earliest``, ``to_latest``,
    ``to_offset``, ``to_datetime``, ``shift_by``, and ``execute``.
    """
    description = admin.describe_groups(args.group)[args.group]
    _require_empty(description)
    partitions = _partitions_of(admin, args.topic)
    committed = {tp: c.offset for tp, c in admin.list_group_offsets(args.group, partitions).items()}
    plan = _plan(admin, args, partitions, committed)
    if args.execute:
        # Checked again by the coordinator: a member joining since is refused there.
        admin.alter_group_offsets(args.group, plan)
    return committed, plan


def run_reset_offsets(args: argparse.Namespace) -> int:
    with group_session(args) as admin:
        committed, plan = reset_group_offsets(admin, args)
    if args.output == "json":
        print_json({"group": args.group, "executed": bool(args.execute), "partitions": [
            {"topic": tp.topic, "partition": tp.partition, "current_offset": committed.get(tp), "new_offset": new}
            for tp, new in plan.items()]})
        return 0

    out = console()
    table = Table("TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET")
    for tp, new in plan.items():
        table.add_row(tp.topic, str(tp.partition), _shown(committed.get(tp)), str(new))
    out.print(table)
    if args.execute:
        out.print(f"Committed new offsets for {len(plan)} partition(s) of group {args.group}.", soft_wrap=True)
    else:
        out.print("Dry run: nothing was changed. Add --execute to commit these offsets.", soft_wrap=True)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with group_session(args) as admin:
        admin.delete_groups(args.group)
    if args.output == "json":
        print_json({"deleted": list(args.group)})
        return 0
    for group in args.group:
        print(f"Deleted group {group}")
    return 0


# --- helpers ------------------------------------------------------------------------------------


def _existing_group(admin: Admin, group_id: str) -> GroupDescription:
    description = admin.describe_groups(group_id)[group_id]
    if not description.exists:
        raise CliError(f"group {group_id!r} does not exist")
    return description


def _require_empty(description: GroupDescription) -> None:
    if not description.is_empty:
        raise CliError(
            f"group {description.group_id!r} is {description.state} with {len(description.members)} member(s); "
            "stop its consumers before resetting its offsets"
        )


def _partitions_of(admin: Admin, specs: list[TopicSpec]) -> list[TopicPartition]:
    """The partitions the specs name, checked against the cluster (unknown topic or partition: CliError)."""
    described = admin.describe_topics(list(dict.fromkeys(s.name for s in specs)))
    chosen: set[TopicPartition] = set()
    for spec in specs:
        existing = {p.partition for p in described[spec.name].partitions}
        wanted = existing if spec.partitions is None else set(spec.partitions)
        missing = sorted(wanted - existing)
        if missing:
            raise CliError(f"topic {spec.name!r} has no partition {missing[0]} (it has {len(existing)})")
        chosen.update(TopicPartition(spec.name, p) for p in wanted)
    return sorted(chosen)


def _plan(
    admin: Admin, args: argparse.Namespace, partitions: list[TopicPartition], committed: dict[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """The new offset of each partition, kept within [log start, log end] as Kafka's tool does."""
    earliest = {tp: found.offset for tp, found in admin.list_offsets({tp: EARLIEST for tp in partitions}).items() if found}
    latest = {tp: found.offset for tp, found in admin.list_offsets({tp: LATEST for tp in partitions}).items() if found}

    def clamp(tp: TopicPartition, offset: int) -> int:
        return min(max(offset, earliest.get(tp, 0)), latest.get(tp, offset))

    if args.to_earliest:
        return {tp: earliest.get(tp, 0) for tp in partitions}
    if args.to_latest:
        return {tp: latest.get(tp, 0) for tp in partitions}
    if args.to_offset is not None:
        return {tp: clamp(tp, args.to_offset) for tp in partitions}
    if args.to_datetime is not None:
        found = admin.list_offsets({tp: args.to_datetime for tp in partitions})
        # No record at or after the time: the end of the log, where the next record will go.
        return {tp: found[tp].offset if found.get(tp) else latest.get(tp, 0) for tp in partitions}
    missing = [tp for tp in partitions if tp not in committed]
    if missing:
        raise CliError(f"cannot shift {missing[0]}: group {args.group!r} has no committed offset there")
    return {tp: clamp(tp, committed[tp] + args.shift_by) for tp in partitions}


def _end_offsets(admin: Admin, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
    """Log end offsets; partitions of topics deleted since the group committed are left out."""
    existing = set(admin.list_topics(include_internal=True))
    live = [tp for tp in partitions if tp.topic in existing]
    if not live:
        return {}
    found = admin.list_offsets({tp: LATEST for tp in live})
    return {tp: o.offset for tp, o in found.items() if o is not None}


def _shown(value: int | None) -> str:
    return NONE_SHOWN if value is None else str(value)
