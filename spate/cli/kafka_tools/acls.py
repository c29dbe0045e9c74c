"""``kafka-acls.sh``: add, remove and list ACLs -- not served yet.

Spate has no authorizer, so every ACL command fails as Kafka's tool does
against a broker without one (SECURITY_DISABLED, exit code 1), after its
flags were read, so a wrong flag is still reported as such.
"""

from __future__ import annotations

import sys
from typing import Sequence

from spate.cli.errors import CliError
from spate.cli.kafka_tools.tool import KafkaToolParser, exactly_one, run_tool

PROG = "kafka-acls.sh"
ACTIONS = ("add", "remove", "list")
SECURITY_DISABLED = ("while executing ACL command: SecurityDisabledException: No Authorizer is configured on "
                     "the broker (SECURITY_DISABLED)")


def build_parser() -> KafkaToolParser:
    parser = KafkaToolParser(PROG, "Add, remove or list ACLs (no authorizer is configured: every command fails).")
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
    exactly_one(args, ACTIONS)
    raise CliError(SECURITY_DISABLED)


def run() -> None:
    sys.exit(run_tool(main))
