"""What every Kafka-named tool shares: its command line, its connection, its failures.

A tool parses Kafka's flags (``--bootstrap-server``, ``--command-config``
and its own), then calls the ``spate`` command's code with an
:class:`argparse.Namespace` in the shape that code expects
(:func:`spate_args`). An unknown flag fails naming the flag, as Kafka's
tools do; so does a flag the tool knows but Spate cannot honour. Every
failure is one line on stderr and exit code 1, Kafka's exit code for both
usage and runtime errors.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, NoReturn, Sequence

from spate.cli.common import BOOTSTRAP_ENV, DEFAULT_API_TIMEOUT_MS
from spate.cli.errors import CliError

FAILURE_EXIT = 1
# The security.protocol values of a --command-config file that Spate's listeners serve.
_SECURITY_PROTOCOLS_SERVED = ("PLAINTEXT",)


class ToolUsageError(CliError):
    """A command line the tool cannot run; exit code 1 as Kafka's tools use."""


class _SubcommandParser(argparse.ArgumentParser):
    """A subcommand's flags (``kafka-transactions.sh describe ...``), failing as its tool does."""

    def error(self, message: str) -> NoReturn:
        raise ToolUsageError(f"{message} (see {self.prog} --help)")


class KafkaToolParser(argparse.ArgumentParser):
    """Kafka's flags, long names only (no abbreviations), errors as one line naming the flag."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description, allow_abbrev=False)
        self.add_argument("--bootstrap-server", metavar="HOST:PORT",
                          help=f"the broker(s) to connect to (default: ${BOOTSTRAP_ENV})")
        self.add_argument("--command-config", metavar="FILE",
                          help="client properties; only security.protocol=PLAINTEXT is served")

    def error(self, message: str) -> NoReturn:
        raise ToolUsageError(f"{message} (see {self.prog} --help)")

    def add_subcommands(self) -> argparse._SubParsersAction:
        return self.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubcommandParser)

    def parse_tool_args(self, argv: Sequence[str] | None) -> argparse.Namespace:
        args, unknown = self.parse_known_args(argv)
        if unknown:
            flag = unknown[0]
            what = f"{flag} is not a recognized option" if flag.startswith("-") else f"unexpected argument {flag!r}"
            raise ToolUsageError(f"{what} (see {self.prog} --help)")
        args.bootstrap_server = args.bootstrap_server or os.environ.get(BOOTSTRAP_ENV)
        if not args.bootstrap_server:
            raise ToolUsageError("Missing required argument \"[bootstrap-server]\"")
        args.client_properties = read_properties(args.command_config) if args.command_config else {}
        check_client_properties(args.client_properties, args.command_config)
        return args


def read_properties(path: str) -> dict[str, str]:
    """A Java properties file: ``key=value`` (or ``key: value``) lines, ``#`` and ``!`` comments."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise ToolUsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    properties: dict[str, str] = {}
    for line in lines:
        text = line.strip()
        if not text or text[0] in "#!":
            continue
        separator = min((i for i in (text.find("="), text.find(":")) if i >= 0), default=-1)
        key, value = (text, "") if separator < 0 else (text[:separator], text[separator + 1:])
        properties[key.strip()] = value.strip()
    return properties


def check_client_properties(properties: dict[str, str], source: str | None) -> None:
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in _SECURITY_PROTOCOLS_SERVED:
        raise ToolUsageError(f"{source}: security.protocol={protocol} is not supported; Spate serves PLAINTEXT")


def property_pairs(values: Sequence[str] | None, flag: str) -> dict[str, str]:
    """``--property KEY=VALUE`` flags (repeatable) as a dict."""
    pairs: dict[str, str] = {}
    for text in values or ():
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise ToolUsageError(f"{flag} expects KEY=VALUE, not {text!r}")
        pairs[key.strip()] = value
    return pairs


def spate_args(args: argparse.Namespace, **fields: Any) -> argparse.Namespace:
    """The namespace a ``spate`` command's ``run_*`` function reads, for this tool's connection."""
    return argparse.Namespace(
        bootstrap_server=args.bootstrap_server, api_timeout_ms=DEFAULT_API_TIMEOUT_MS, output="table", **fields
    )


def exactly_one(args: argparse.Namespace, actions: Sequence[str]) -> str:
    """The one action flag given (e.g. ``create`` of --create/--list/...); a usage error otherwise."""
    chosen = [name for name in actions if getattr(args, name)]
    flags = ", ".join(f"--{name.replace('_', '-')}" for name in actions)
    if len(chosen) != 1:
        raise ToolUsageError(f"Command must include exactly one action: {flags}")
    return chosen[0]


def require(args: argparse.Namespace, name: str, action: str) -> Any:
    value = getattr(args, name)
    if value is None or value is False:
        raise ToolUsageError(f"Missing required argument \"[{name.replace('_', '-')}]\" for --{action}")
    return value


def run_tool(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run a tool's ``main``; a CliError becomes one line on stderr and exit code 1."""
    try:
        return main(argv)
    except CliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return FAILURE_EXIT
    except KeyboardInterrupt:
        return 130
