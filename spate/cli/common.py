"""What the client-facing commands share: connection options, argument types, errors, output.

Every command takes ``--bootstrap-server HOST:PORT`` (default from
``SPATE_BOOTSTRAP_SERVER``, else ``127.0.0.1:9092``) and ``--api-timeout-ms``,
the longest any one broker operation may take, so an unreachable broker
fails in bounded time with one line on stderr. ``--command-config FILE`` is a
Kafka client properties file whose ``security.protocol``, ``sasl.*`` and
``ssl.*`` settings secure the connections, as Kafka's tools take it. Commands that describe the
cluster take ``--output table|json``: tables for people, one JSON document
on one line of stdout for scripts.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import sys
from typing import Any, Iterator, NoReturn, Sequence, TextIO

from rich.console import Console

from spate.cli.errors import CliError
from spate.client import (
    Admin,
    AdminError,
    BrokerUnavailableError,
    ClientError,
    ErrorCode,
    KafkaError,
    KafkaTimeoutError,
    NetworkError,
)
from spate.client.security_properties import SecurityPropertyError, read_properties, security_settings

BOOTSTRAP_ENV = "SPATE_BOOTSTRAP_SERVER"
DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
DEFAULT_API_TIMEOUT_MS = 30_000
USAGE_EXIT = 2
# Tables written to a pipe or file keep their rows on one line instead of wrapping at 80 columns.
PIPE_WIDTH = 200

OUTPUT_CHOICES = ("table", "json")
ACKS_CHOICES = ("0", "1", "-1", "all")
COMPRESSION_CHOICES = ("none", "gzip", "snappy", "lz4", "zstd")


class CommandParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        report_usage_error(self, message)


def report_usage_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    print(f"{parser.prog}: error: {message} (see --help)", file=sys.stderr)
    sys.exit(USAGE_EXIT)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make a parser built by someone else's ``add_parser`` report usage errors on one line."""
    parser.error = lambda message: report_usage_error(parser, message)  # type: ignore[method-assign]
    return parser


def command_group(subparsers: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:
    """Add ``spate NAME COMMAND ...``; the commands it returns report usage errors on one line.

    ``spate NAME`` alone prints the group's help on stderr and exits with the usage code.
    """
    group = one_line_errors(subparsers.add_parser(name, help=help))
    group.set_defaults(func=lambda args: (group.print_help(sys.stderr), USAGE_EXIT)[1])
    return group.add_subparsers(title=f"{name} commands", metavar="COMMAND", parser_class=CommandParser)


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server",
        default=os.environ.get(BOOTSTRAP_ENV) or DEFAULT_BOOTSTRAP,
        metavar="HOST:PORT",
        help=f"broker(s) to connect to, comma-separated (default: ${BOOTSTRAP_ENV} or {DEFAULT_BOOTSTRAP})",
    )
    parser.add_argument(
        "--api-timeout-ms",
        type=positive_int,
        default=DEFAULT_API_TIMEOUT_MS,
        metavar="MS",
        help=f"give up on a broker operation after this long (default: {DEFAULT_API_TIMEOUT_MS})",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="Kafka client properties (security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*) for the "
             "connections",
    )


def client_security(args: argparse.Namespace) -> dict[str, Any]:
    """The client security settings of ``--command-config`` (none without it)."""
    path = getattr(args, "command_config", None)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            properties = read_properties(handle.read())
    except OSError as exc:
        raise CliError(f"cannot read --command-config {path}: {exc.strerror or exc}", exit_code=USAGE_EXIT) from None
    try:
        return security_settings(properties)
    except SecurityPropertyError as exc:
        raise CliError(f"--command-config {path}: {exc}", exit_code=USAGE_EXIT) from None


def open_admin(args: argparse.Namespace) -> Admin:
    """An admin client for the command's ``--bootstrap-server``, ``--api-timeout-ms`` and ``--command-config``."""
    security = client_security(args)
    with client_errors(args.bootstrap_server):
        return Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
                     request_timeout_ms=args.api_timeout_ms, client_id="spate-cli", **security)


# --- argument types -----------------------------------------------------------------------------


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be zero or a positive integer, not {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def key_value(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` (the value may itself contain ``=``; the key may not be empty)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.strip(), value


def config_map(pairs: Sequence[tuple[str, str]] | None) -> dict[str, str]:
    return dict(pairs or ())


# --- errors -------------------------------------------------------------------------------------


@contextlib.contextmanager
def client_errors(bootstrap: str) -> Iterator[None]:
    """Turn the client's failures into one-line CliErrors naming what went wrong."""
    try:
        yield
    except CliError:
        raise
    except AdminError as exc:
        raise CliError(describe_admin_error(exc)) from None
    except KafkaTimeoutError as exc:
        raise CliError(f"timed out talking to {bootstrap}: {_first_line(exc)}") from None
    except (BrokerUnavailableError, NetworkError) as exc:
        raise CliError(f"cannot reach a broker at {bootstrap}: {_first_line(exc)}") from None
    except KafkaError as exc:
        raise CliError(_first_line(exc)) from None
    except ClientError as exc:
        raise CliError(_first_line(exc)) from None
    except ValueError as exc:
        # The client validates options (bootstrap address, acks, ...) with ValueError.
        raise CliError(_first_line(exc), exit_code=USAGE_EXIT) from None
    except OSError as exc:
        raise CliError(f"{exc.strerror or exc}") from None


def describe_admin_error(exc: AdminError) -> str:
    parts = []
    for resource, error in exc.errors.items():
        if error.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            parts.append(f"topic {_resource_name(resource)!r} does not exist")
        elif error.code == ErrorCode.TOPIC_ALREADY_EXISTS:
            parts.append(f"topic {_resource_name(resource)!r} already exists")
        else:
            detail = f": {error.message}" if error.message else ""
            parts.append(f"{_resource_name(resource)}: {error.code.name}{detail}")
    return "; ".join(parts)


def _resource_name(resource: Any) -> str:
    name = str(getattr(resource, "name", resource))
    if getattr(getattr(resource, "type", None), "name", None) == "BROKER":  # a config resource of a broker
        return f"broker {name}" if name else "the brokers' defaults"
    return name


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# --- output -------------------------------------------------------------------------------------


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", choices=OUTPUT_CHOICES, default="table",
                        help="table (default) or json: one JSON document on one line, for scripts")


def print_json(document: Any) -> None:
    print(json.dumps(document, separators=(",", ":")))


def console(file: TextIO | None = None) -> Console:
    """A rich console for tables: full width on a terminal, a wide fixed width on a pipe."""
    stream = file or sys.stdout
    if stream.isatty():
        return Console(file=stream)
    return Console(file=stream, width=PIPE_WIDTH, no_color=True, highlight=False)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def decoded(data: bytes | None) -> str | dict[str, str] | None:
    """UTF-8 text when the bytes are valid UTF-8, else ``{"base64": ...}`` so the fallback is explicit."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def read_lines(path: str | None) -> Iterator[bytes]:
    """Lines of a file (or stdin when ``path`` is None), without their line ending."""
    if path is None:
        yield from _strip_endings(sys.stdin.buffer)
        return
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        yield from _strip_endings(handle)


def _strip_endings(stream: Any) -> Iterator[bytes]:
    for line in stream:
        if line.endswith(b"\r\n"):
            yield line[:-2]
        elif line.endswith(b"\n"):
            yield line[:-1]
        else:
            yield line
