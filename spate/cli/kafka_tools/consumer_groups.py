"""``kafka-consumer-groups.sh``: list, describe, reset offsets of and delete consumer groups.

``--describe`` prints Kafka's table (a blank line, then space-aligned
columns) on stdout::

    GROUP  TOPIC  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID  HOST  CLIENT-ID

with ``--members`` one row per member, with ``--state`` one row per group;
notes such as "has no active members" go to stderr, as Kafka's tool writes
them. ``--reset-offsets`` is a dry run unless ``--execute`` and prints
GROUP TOPIC PARTITION NEW-OFFSET. The work is ``spate groups``'.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from spate.cli import groups as spate_groups
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, exactly_one, run_tool, spate_args
from spate.client import Admin, GroupDescription

PROG = "kafka-consumer-groups.sh"
ACTIONS = ("list", "describe", "reset_offsets", "delete", "delete_offsets")
RESET_MODES = ("to_earliest", "to_latest", "to_offset", "to_datetime", "shift_by")
NONE_SHOWN = "-"
MIN_WIDTH = 15


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "List, describe, reset the offsets of, and delete consumer groups.")
    for action in ACTIONS:
        parser.add_argument(f"--{action.replace('_', '-')}", dest=action, action="store_true")
    parser.add_argument("--group", action="append", default=[], metavar="GROUP")
    parser.add_argument("--all-groups", action="store_true")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P,P...]")
    parser.add_argument("--all-topics", action="store_true")
    parser.add_argument("--members", action="store_true")
    parser.add_argument("--state", nargs="?", const="", default=None, metavar="STATE")
    parser.add_argument("--offsets", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--to-earliest", action="store_true")
    parser.add_argument("--to-latest", action="store_true")
    parser.add_argument("--to-current", action="store_true")
    parser.add_argument("--to-offset", metavar="N")
    parser.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss")
    parser.add_argument("--shift-by", metavar="N")
    parser.add_argument("--execute", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--timeout", type=int, metavar="MS")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    action = exactly_one(args, ACTIONS)
    if action == "list":
        return spate_groups.run_list(spate_args(args))
    if action == "delete_offsets":
        raise ToolUsageError("--delete-offsets is not supported; reset the group's offsets with --reset-offsets")
    with spate_groups.group_session(spate_args(args)) as admin:
        groups = _groups(admin, args, action)
        if action == "describe":
            return _describe(admin, args, groups)
        if action == "reset_offsets":
            return _reset_offsets(admin, args, groups)
        admin.delete_groups(groups)
    print(f"Deletion of requested consumer groups ({', '.join(repr(g) for g in groups)}) was successful.")
    return 0


def _groups(admin: Admin, args: argparse.Namespace, action: str) -> list[str]:
    if args.all_groups:
        return [listing.group_id for listing in admin.list_groups()]
    if not args.group:
        raise ToolUsageError(f"Option [{action.replace('_', '-')}] takes one of these options: [all-groups], [group]")
    return list(dict.fromkeys(args.group))


# --- describe -----------------------------------------------------------------------------------


def print_table(rows: list[list[str]]) -> None:
    """Kafka's layout: a blank line, then columns left-aligned at least 15 wide, the last one unpadded."""
    widths = [max(MIN_WIDTH, *(len(row[i]) for row in rows)) for i in range(len(rows[0]) - 1)]
    print()
    for row in rows:
        print(" ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " " + row[-1])


def _describe(admin: Admin, args: argparse.Namespace, groups: list[str]) -> int:
    for group_id in groups:
        if args.state is not None:
            description = admin.describe_groups(group_id)[group_id]
            _note_state(description)
            coordinator = description.coordinator
            where = f"{coordinator.host}:{coordinator.port} ({coordinator.node_id})" if coordinator else NONE_SHOWN
            members = str(len(description.members))
            print_table([["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                         [group_id, where, description.protocol or "", description.state, members]])
        elif args.members:
            description = admin.describe_groups(group_id)[group_id]
            _note_state(description)
            rows = [["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]]
            rows += [[group_id, m.member_id, m.host, m.client_id, str(len(m.assignment))] for m in description.members]
            print_table(rows)
        else:
            _note_state(admin.describe_groups(group_id)[group_id])
            description, lags = spate_groups.describe_group_lag(admin, group_id)
            rows = [["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                     "CLIENT-ID"]]
            for lag in lags:
                owner = lag.owner
                rows.append([group_id, lag.partition.topic, str(lag.partition.partition), _shown(lag.current),
                             _shown(lag.end), _shown(lag.lag), owner.member_id if owner else NONE_SHOWN,
                             owner.host if owner else NONE_SHOWN, owner.client_id if owner else NONE_SHOWN])
            for member in description.members:
                if not member.assignment:
                    rows.append([group_id, NONE_SHOWN, NONE_SHOWN, NONE_SHOWN, NONE_SHOWN, NONE_SHOWN,
                                 member.member_id, member.host, member.client_id])
            print_table(rows)
    sys.stdout.flush()
    return 0


def _note_state(description: GroupDescription) -> None:
    if not description.exists:
        raise CliError(f"Consumer group '{description.group_id}' does not exist.")
    if description.state == "Empty":
        print(f"\nConsumer group '{description.group_id}' has no active members.", file=sys.stderr)
    elif description.state in ("PreparingRebalance", "CompletingRebalance"):
        print(f"\nWarning: Consumer group '{description.group_id}' is rebalancing.", file=sys.stderr)


def _shown(value: int | None) -> str:
    return NONE_SHOWN if value is None else str(value)


# --- reset-offsets ------------------------------------------------------------------------------


def _reset_offsets(admin: Admin, args: argparse.Namespace, groups: list[str]) -> int:
    modes = [mode for mode in RESET_MODES if getattr(args, mode) not in (None, False)]
    if args.to_current:
        raise ToolUsageError("--to-current is not supported; use --shift-by 0")
    if len(modes) != 1:
        raise ToolUsageError("Option [reset-offsets] takes exactly one of: --to-earliest, --to-latest, "
                             "--to-offset, --to-datetime, --shift-by")
    if args.execute and args.dry_run:
        raise ToolUsageError("Option [execute] cannot be used with [dry-run]")
    if not args.execute and not args.dry_run:
        print("WARN: No action will be performed as the --execute option is missing. In a future major release, "
              "the default behavior of this command will be to prompt the user before executing the reset rather "
              "than doing a dry run. You should add the --dry-run option explicitly if you are scripting this "
              "command and want to keep the current default behavior without prompting.", file=sys.stderr)
    rows = [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]]
    for group_id in groups:
        reset = spate_args(args, group=group_id, topic=_topics(admin, args, group_id), execute=args.execute,
                           **_reset_mode(args))
        _, plan = spate_groups.reset_group_offsets(admin, reset)
        rows += [[group_id, tp.topic, str(tp.partition), str(offset)] for tp, offset in plan.items()]
    print_table(rows)
    return 0


def _topics(admin: Admin, args: argparse.Namespace, group_id: str) -> list[spate_groups.TopicSpec]:
    if args.all_topics == bool(args.topic):
        raise ToolUsageError("Option [reset-offsets] takes one of these options: [all-topics], [topic]")
    if args.all_topics:
        names = sorted({tp.topic for tp in admin.list_group_offsets(group_id)})
        if not names:
            raise CliError(f"group '{group_id}' has no committed offsets; name the topics with --topic")
        return [spate_groups.TopicSpec(name, None) for name in names]
    return [_parsed(spate_groups.topic_spec, text, "--topic") for text in args.topic]


def _reset_mode(args: argparse.Namespace) -> dict[str, object]:
    return {
        "to_earliest": args.to_earliest,
        "to_latest": args.to_latest,
        "to_offset": None if args.to_offset is None
        else _parsed(spate_groups.offset_value, args.to_offset, "--to-offset"),
        "to_datetime": None if args.to_datetime is None
        else _parsed(spate_groups.iso_datetime, args.to_datetime, "--to-datetime"),
        "shift_by": None if args.shift_by is None else _parsed(spate_groups.signed_int, args.shift_by, "--shift-by"),
    }


def _parsed(parse: object, text: str, flag: str) -> object:
    try:
        return parse(text)  # type: ignore[operator]
    except argparse.ArgumentTypeError as exc:
        raise ToolUsageError(f"{flag}: {exc}") from None


def run() -> None:
    sys.exit(run_tool(main))
