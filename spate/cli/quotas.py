"""``spate quotas alter|describe``: client quotas, through AlterClientQuotas / DescribeClientQuotas.

An entity is a user, a client-id, or both (``--user``, ``--client-id``);
``<default>`` (or ``--user-defaults`` / ``--client-defaults``) names the
default of that type. ``alter`` sets keys with ``--add KEY=VALUE`` and removes
them with ``--delete KEY``; the keys are Kafka's ``producer_byte_rate``,
``consumer_byte_rate`` (bytes per second) and ``request_percentage`` (percent
of one request thread). ``describe`` lists the quotas of the matching
entities: every entity when no type is named.
"""

from __future__ import annotations

import argparse

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    command_group,
    key_value,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client.admin.quota_admin import ANY, ClientQuotaAlteration, entity_text

QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
DEFAULT = "<default>"


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "quotas", "set and show client quotas (byte rates, request percentage)")

    alter = commands.add_parser("alter", help="set or remove quotas of a user, a client-id or both")
    _entity_arguments(alter)
    alter.add_argument("--add", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                       help=f"set a quota (repeatable): {', '.join(QUOTA_KEYS)}")
    alter.add_argument("--delete", action="append", default=[], metavar="KEY", help="remove a quota (repeatable)")
    alter.set_defaults(func=run_alter)

    describe = commands.add_parser("describe", help="the quotas of the matching entities")
    _entity_arguments(describe)
    add_output_argument(describe)
    describe.set_defaults(func=run_describe)

    for parser in (alter, describe):
        add_connection_arguments(parser)


def _entity_arguments(parser: argparse.ArgumentParser) -> None:
    user = parser.add_mutually_exclusive_group()
    user.add_argument("--user", metavar="NAME", help=f"the user ({DEFAULT} for the default user)")
    user.add_argument("--user-defaults", action="store_true", help="the default user")
    client = parser.add_mutually_exclusive_group()
    client.add_argument("--client-id", metavar="ID", help=f"the client-id ({DEFAULT} for the default client)")
    client.add_argument("--client-defaults", action="store_true", help="the default client-id")


def _entity(args: argparse.Namespace) -> dict[str, str | None]:
    entity: dict[str, str | None] = {}
    for kind, name, default in (("user", args.user, args.user_defaults),
                                ("client-id", args.client_id, args.client_defaults)):
        if default or name == DEFAULT:
            entity[kind] = None
        elif name is not None:
            entity[kind] = name
    return entity


def _number(key: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CliError(f"quota {key} must be a number, not {text!r}", exit_code=2) from None


def run_alter(args: argparse.Namespace) -> int:
    entity = _entity(args)
    if not entity:
        raise CliError("name a --user, a --client-id or both (or their defaults)", exit_code=2)
    ops: dict[str, float | None] = {key: _number(key, value) for key, value in args.add}
    for key in args.delete:
        if key in ops:
            raise CliError(f"quota {key} is both added and deleted", exit_code=2)
        ops[key] = None
    if not ops:
        raise CliError("nothing to change: give --add KEY=VALUE or --delete KEY", exit_code=2)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.alter_client_quotas([ClientQuotaAlteration(entity, ops)])
    print(f"quotas of {entity_text(entity)} updated")
    return 0


def run_describe(args: argparse.Namespace) -> int:
    entity = _entity(args)
    strict = bool(entity)
    components = entity or {"user": ANY}
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        entries = admin.describe_client_quotas(components, strict=strict)
        if not entity:  # every entity: users (with or without a client-id), then client-ids alone
            entries += admin.describe_client_quotas({"client-id": ANY}, strict=True)
    if args.output == "json":
        print_json([{"entity": {k: DEFAULT if v is None else v for k, v in e.entity.items()}, "quotas": e.values}
                    for e in entries])
        return 0
    for e in entries:
        values = ", ".join(f"{k}={_plain(v)}" for k, v in sorted(e.values.items()))
        print(f"{entity_text(e.entity)}\t{values}")
    return 0


def _plain(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
