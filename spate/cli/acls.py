"""``spate acls add|remove|list``: ACLs through CreateAcls, DeleteAcls and DescribeAcls, as kafka-acls.sh.

``add`` grants (``--allow-principal``) or denies (``--deny-principal``) each
``--operation`` on the resource named by ``--topic``, ``--group``,
``--transactional-id`` or ``--cluster``, from ``--allow-host``/``--deny-host``
(default ``*``), with ``--resource-pattern-type`` LITERAL (default) or
PREFIXED. ``remove`` takes the same options and removes the matching ACLs
(an option left out matches anything; ``--resource-pattern-type`` may also
be ANY or MATCH). ``list`` shows the ACLs, optionally of one resource or
principal.
"""

from __future__ import annotations

import argparse

from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    command_group,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client.admin.acl_admin import CLUSTER_RESOURCE_NAME, OPERATIONS, AclBinding, AclBindingFilter

OPERATION_NAMES = tuple(name for name in OPERATIONS if name != "Any")


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "acls", "add, remove and list ACLs (authorizer.class.name)")
    add = commands.add_parser("add", help="allow or deny principals operations on a resource")
    remove = commands.add_parser("remove", help="remove the ACLs the options match")
    listing = commands.add_parser("list", help="the ACLs, optionally of one resource or principal")
    for parser, patterns in ((add, ("LITERAL", "PREFIXED")), (remove, ("LITERAL", "PREFIXED", "ANY", "MATCH")),
                             (listing, ("LITERAL", "PREFIXED", "ANY", "MATCH"))):
        resource = parser.add_mutually_exclusive_group(required=parser is add)
        resource.add_argument("--topic", help="a topic (or prefix), or * for every topic")
        resource.add_argument("--group", help="a consumer group (or prefix), or *")
        resource.add_argument("--transactional-id", help="a transactional id (or prefix), or *")
        resource.add_argument("--cluster", action="store_true", help="the cluster")
        parser.add_argument("--resource-pattern-type", choices=patterns, type=str.upper,
                            default="LITERAL" if parser is add else None,
                            help="how the name matches (add: LITERAL or PREFIXED, default LITERAL)")
        add_connection_arguments(parser)
    for parser in (add, remove):
        parser.add_argument("--allow-principal", action="append", default=[], metavar="PRINCIPAL",
                            help="e.g. User:alice, or User:* (repeatable)")
        parser.add_argument("--deny-principal", action="append", default=[], metavar="PRINCIPAL",
                            help="a principal the operations are denied to (repeatable)")
        parser.add_argument("--allow-host", action="append", default=[], metavar="HOST")
        parser.add_argument("--deny-host", action="append", default=[], metavar="HOST")
        parser.add_argument("--operation", action="append", default=[], type=_operation, metavar="OPERATION",
                            help=f"one of {', '.join(OPERATION_NAMES)} (repeatable)")
    listing.add_argument("--principal", help="only the ACLs of this principal")
    add_output_argument(listing)
    add.set_defaults(func=run_add)
    remove.set_defaults(func=run_remove)
    listing.set_defaults(func=run_list)


def _operation(text: str) -> str:
    wanted = text.replace("_", "").replace("-", "").lower()
    for name in OPERATION_NAMES:
        if name.lower() == wanted:
            return name
    raise argparse.ArgumentTypeError(f"unknown operation {text!r}; one of {', '.join(OPERATION_NAMES)}")


def _resource(args: argparse.Namespace) -> tuple[str | None, str | None]:
    if args.cluster:
        return "Cluster", CLUSTER_RESOURCE_NAME
    for kind, value in (("Topic", args.topic), ("Group", args.group), ("TransactionalId", args.transactional_id)):
        if value is not None:
            return kind, value
    return None, None


def _entries(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(permission, principal, host) for each principal and host named."""
    entries = [("Allow", p, h) for p in args.allow_principal for h in (args.allow_host or ["*"])]
    entries += [("Deny", p, h) for p in args.deny_principal for h in (args.deny_host or ["*"])]
    return entries


def run_add(args: argparse.Namespace) -> int:
    kind, name = _resource(args)
    entries = _entries(args)
    if not entries:
        raise CliError("name at least one --allow-principal or --deny-principal")
    if not args.operation:
        raise CliError("name at least one --operation")
    bindings = [AclBinding(kind, name, principal, operation, permission, args.resource_pattern_type, host)
                for permission, principal, host in entries for operation in args.operation]
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        admin.create_acls(bindings)
    for binding in bindings:
        print(f"added: {binding}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    kind, name = _resource(args)
    entries: list[tuple[str | None, str | None, str | None]] = list(_entries(args)) or [(None, None, None)]
    filters = [AclBindingFilter(kind, name, args.resource_pattern_type, principal, host, operation, permission)
               for permission, principal, host in entries for operation in (args.operation or [None])]
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        removed = admin.delete_acls(filters)
    for binding in removed:
        print(f"removed: {binding}")
    if not removed:
        print("no ACL matched")
    return 0


def run_list(args: argparse.Namespace) -> int:
    kind, name = _resource(args)
    acl_filter = AclBindingFilter(kind, name, args.resource_pattern_type, args.principal)
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        bindings = admin.describe_acls(acl_filter)
    if args.output == "json":
        print_json([binding.__dict__ for binding in bindings])
        return 0
    for binding in bindings:
        print(binding)
    return 0
