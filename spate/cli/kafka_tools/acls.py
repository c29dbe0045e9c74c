"""``kafka-acls.sh --add|--remove|--list``: ACLs through CreateAcls, DeleteAcls and DescribeAcls.

Kafka's flags: ``--allow-principal``/``--deny-principal`` (with
``--allow-host``/``--deny-host``, default ``*``), ``--operation``, the
resources ``--topic``, ``--group``, ``--transactional-id`` (each repeatable)
and ``--cluster``, ``--resource-pattern-type``, and the conveniences
``--producer`` (Write, Describe and Create on the topics; with
``--transactional-id`` Write and Describe on it; with ``--idempotent``
IdempotentWrite on the cluster) and ``--consumer`` (Read and Describe on the
topics, Read on the groups). The output is Kafka's ("Adding ACLs for
resource `ResourcePattern(...)`:" then one ``(principal=..., host=...,
operation=..., permissionType=...)`` line per ACL), so scripts that read it
keep working. A broker without an authorizer answers SECURITY_DISABLED.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterable, Iterator, Sequence

from spate.cli.common import client_errors, open_admin
from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, exactly_one, run_tool, spate_args
from spate.client.admin.acl_admin import CLUSTER_RESOURCE_NAME, OPERATIONS, AclBinding, AclBindingFilter
from spate.client.errors import AdminError
from spate.protocol import ErrorCode, KafkaError

PROG = "kafka-acls.sh"
ACTIONS = ("add", "remove", "list")
_OPERATION_NAMES = {name.lower(): name for name in OPERATIONS if name != "Any"}
_RESOURCE_TYPES = {"Topic": "TOPIC", "Group": "GROUP", "TransactionalId": "TRANSACTIONAL_ID", "Cluster": "CLUSTER"}

Resource = tuple[str, str]  # (resource type, name)
SECURITY_DISABLED = ("while executing ACL command: SecurityDisabledException: No Authorizer is configured on "
                     "the broker (SECURITY_DISABLED)")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Add, remove or list ACLs.")
    for action in ACTIONS:
        parser.add_argument(f"--{action}", action="store_true")
    for repeatable in ("--allow-principal", "--deny-principal", "--allow-host", "--deny-host", "--operation",
                       "--topic", "--group", "--transactional-id", "--delegation-token", "--user-principal"):
        parser.add_argument(repeatable, action="append", default=[], metavar="VALUE")
    parser.add_argument("--principal", metavar="PRINCIPAL")
    parser.add_argument("--resource-pattern-type", metavar="TYPE")
    for switch in ("--cluster", "--producer", "--consumer", "--idempotent", "--force"):
        parser.add_argument(switch, action="store_true")
    parser.add_argument("--bootstrap-controller", metavar="HOST:PORT")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_tool_args(argv)
    action = exactly_one(args, ACTIONS)
    if args.delegation_token or args.user_principal:
        raise ToolUsageError("delegation-token and user-principal resources are not supported")
    pattern = (args.resource_pattern_type or ("LITERAL" if action == "add" else "ANY" if action == "remove"
                                              else None))
    with open_admin(spate_args(args)) as admin, client_errors(args.bootstrap_server), _security_disabled():
        if action == "list":
            resources = _resources(args) or [(None, None)]
            for kind, name in resources:
                _print_current(admin.describe_acls(AclBindingFilter(kind, name, pattern, args.principal)))
            return 0
        bindings = _bindings(args, pattern.upper() if pattern and pattern.upper() in ("LITERAL", "PREFIXED")
                             else "LITERAL")
        if action == "add":
            for resource, acls in _by_resource(bindings).items():
                _print_block("Adding ACLs for resource", resource, acls)
            admin.create_acls(bindings)
        else:
            filters = [AclBindingFilter(b.resource_type, b.name, pattern, b.principal, b.host, b.operation,
                                        b.permission) for b in bindings]
            for resource, acls in _by_resource(bindings).items():
                _print_block("Removing ACLs for resource", resource, acls)
            admin.delete_acls(filters)
        for kind, name in sorted({(b.resource_type, b.name) for b in bindings}):
            _print_current(admin.describe_acls(AclBindingFilter(kind, name, pattern)))
    return 0


@contextlib.contextmanager
def _security_disabled() -> Iterator[None]:
    """A broker without an authorizer: Kafka's tool reports it in these words."""
    try:
        yield
    except (AdminError, KafkaError) as exc:
        errors = exc.errors.values() if isinstance(exc, AdminError) else [exc]
        if any(getattr(error, "code", None) == ErrorCode.SECURITY_DISABLED for error in errors):
            raise CliError(SECURITY_DISABLED) from None
        raise


def _resources(args) -> list[Resource]:
    resources = [("Topic", t) for t in args.topic] + [("Group", g) for g in args.group]
    resources += [("TransactionalId", t) for t in args.transactional_id]
    if args.cluster:
        resources.append(("Cluster", CLUSTER_RESOURCE_NAME))
    return resources


def _bindings(args, pattern: str) -> list[AclBinding]:
    """Every ACL the flags name: explicit operations on every resource, plus the producer/consumer sets."""
    wanted: list[tuple[Resource, str]] = []
    operations = [_operation(text) for text in args.operation]
    wanted += [(resource, op) for resource in _resources(args) for op in operations]
    if args.producer:
        wanted += [(("Topic", t), op) for t in args.topic for op in ("Write", "Describe", "Create")]
        wanted += [(("TransactionalId", t), op) for t in args.transactional_id for op in ("Write", "Describe")]
        if args.idempotent:
            wanted.append((("Cluster", CLUSTER_RESOURCE_NAME), "IdempotentWrite"))
    if args.consumer:
        wanted += [(("Topic", t), op) for t in args.topic for op in ("Read", "Describe")]
        wanted += [(("Group", g), "Read") for g in args.group]
    if not wanted:
        raise ToolUsageError("name a resource (--topic, --group, --transactional-id or --cluster) and "
                             "--operation, --producer or --consumer")
    entries = [("Allow", p, h) for p in args.allow_principal for h in (args.allow_host or ["*"])]
    entries += [("Deny", p, h) for p in args.deny_principal for h in (args.deny_host or ["*"])]
    if not entries:
        raise ToolUsageError("name at least one --allow-principal or --deny-principal")
    unique = dict.fromkeys(AclBinding(kind, name, principal, op, permission, pattern, host)
                           for (kind, name), op in wanted for permission, principal, host in entries)
    return list(unique)


def _operation(text: str) -> str:
    name = _OPERATION_NAMES.get(text.replace("_", "").replace("-", "").lower())
    if name is None:
        raise ToolUsageError(f"{text} is not a valid operation: one of {', '.join(_OPERATION_NAMES.values())}")
    return name


def _by_resource(bindings: Iterable[AclBinding]) -> dict[tuple[str, str, str], list[AclBinding]]:
    grouped: dict[tuple[str, str, str], list[AclBinding]] = {}
    for binding in bindings:
        grouped.setdefault((binding.resource_type, binding.name, binding.pattern_type), []).append(binding)
    return grouped


def _print_current(bindings: list[AclBinding]) -> None:
    for resource, acls in _by_resource(bindings).items():
        _print_block("Current ACLs for resource", resource, acls)


def _print_block(title: str, resource: tuple[str, str, str], acls: list[AclBinding]) -> None:
    kind, name, pattern = resource
    print(f"{title} `ResourcePattern(resourceType={_RESOURCE_TYPES.get(kind, kind.upper())}, name={name}, "
          f"patternType={pattern})`: ")
    for acl in acls:
        print(f" \t(principal={acl.principal}, host={acl.host}, operation={_upper_snake(acl.operation)}, "
              f"permissionType={acl.permission.upper()}) ")
    print()


def _upper_snake(name: str) -> str:
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).upper()


def run() -> None:
    sys.exit(run_tool(main))
