"""``spate configs describe|alter``: a broker's dynamic configs, or the cluster-wide defaults.

``--broker ID`` names one broker, ``--broker-defaults`` the default of every
broker. ``describe`` lists the dynamic configs (every config with ``--all``)
with their source and synonyms, one per line as ``kafka-configs.sh`` prints
them, or JSON; ``alter`` sets keys with ``--set KEY=VALUE`` and removes them
with ``--delete KEY`` (IncrementalAlterConfigs). Topic configs are ``spate
topics describe|alter-config``.
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
from spate.cli.kafka_tools.configs import DYNAMIC_SOURCES, config_line
from spate.client import AlterConfigOp, ConfigResource


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "configs", "show and change dynamic broker configs")

    describe = commands.add_parser("describe", help="a broker's dynamic configs (or every config with --all)")
    _entity_arguments(describe)
    describe.add_argument("--all", action="store_true", help="every config, static and default ones too")
    add_output_argument(describe)
    describe.set_defaults(func=run_describe)

    alter = commands.add_parser("alter", help="set or remove dynamic configs of a broker or of every broker")
    _entity_arguments(alter)
    alter.add_argument("--set", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                       help="set a config (repeatable), e.g. log.retention.ms=3600000")
    alter.add_argument("--delete", action="append", default=[], metavar="KEY", help="remove a config (repeatable)")
    alter.set_defaults(func=run_alter)

    for parser in (describe, alter):
        add_connection_arguments(parser)


def _entity_arguments(parser: argparse.ArgumentParser) -> None:
    entity = parser.add_mutually_exclusive_group(required=True)
    entity.add_argument("--broker", metavar="ID", help="one broker, by id")
    entity.add_argument("--broker-defaults", action="store_true", help="the cluster-wide default of every broker")


def _resource(args: argparse.Namespace) -> ConfigResource:
    return ConfigResource.broker("" if args.broker_defaults else args.broker)


def _label(args: argparse.Namespace) -> str:
    return "the brokers' defaults" if args.broker_defaults else f"broker {args.broker}"


def run_describe(args: argparse.Namespace) -> int:
    resource = _resource(args)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        entries = list(admin.describe_configs([resource], include_synonyms=True)[resource].values())
    if not args.all:
        entries = [e for e in entries if e.source in DYNAMIC_SOURCES["brokers"]]
    entries.sort(key=lambda e: e.name)
    if args.output == "json":
        print_json([{"name": e.name, "value": None if e.is_sensitive else e.value, "source": e.source.name,
                     "synonyms": [{"name": n, "value": v, "source": s.name} for n, v, s in e.synonyms]}
                    for e in entries])
        return 0
    for entry in entries:
        print(config_line(entry))
    return 0


def run_alter(args: argparse.Namespace) -> int:
    deleted = set(args.delete)
    both = sorted(deleted & {key for key, _ in args.set})
    if both:
        raise CliError(f"config(s) {', '.join(both)} are both set and deleted", exit_code=2)
    changes = [AlterConfigOp(key, value) for key, value in args.set]
    changes += [AlterConfigOp(key, op=AlterConfigOp.OpType.DELETE) for key in args.delete]
    if not changes:
        raise CliError("nothing to change: give --set KEY=VALUE or --delete KEY", exit_code=2)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.incremental_alter_configs({_resource(args): changes})
    print(f"configs of {_label(args)} updated")
    return 0
