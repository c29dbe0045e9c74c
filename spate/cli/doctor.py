"""``spate doctor``: is this machine ready to run Spate, and is the broker healthy?

One line per check, with the fix for each failure; exit code 1 when any check fails.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spate.cli.common import add_output_argument, print_json
from spate.cli.doctor_checks import (
    Check,
    check_broker,
    check_java,
    check_log_dir,
    check_port,
    check_pyspark,
    check_spark_finds_spate,
    check_zookeeper,
    listener_address,
)
from spate.cli.errors import CliError

FAILED_EXIT = 1
# The broker's defaults for what the doctor checks (broker_core/config/broker_properties.py).
DEFAULT_LISTENERS = "PLAINTEXT://127.0.0.1:9092"
DEFAULT_LOG_DIR = "/tmp/spate-logs"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check Java, pyspark, ports, log dirs, ZooKeeper and a running broker",
        description="Check what a broker needs on this machine (Java 17+, pyspark, the listener ports, the log "
                    "dirs' free space and permissions, ZooKeeper when zookeeper.connect is set) and, with "
                    "--bootstrap-server, the running broker's cluster, listeners and API versions. "
                    "Exit code 1 when a check fails.",
    )
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="the broker.properties to check (default: the built-in defaults)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a broker property on top of --config, as for `spate broker start`")
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT",
                        help="also check this running broker: its cluster, listeners and API versions")
    add_output_argument(parser)
    parser.set_defaults(func=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    checks = [check_java(), check_pyspark(), check_spark_finds_spate(),
              *broker_config_checks(args.config, args.override)]
    if args.bootstrap_server:
        checks.extend(check_broker(args.bootstrap_server))
    report(checks, args.output)
    return 0 if all(check.ok for check in checks) else FAILED_EXIT


def broker_config_checks(path: Path | None, overrides: list[str]) -> list[Check]:
    """The ports, log dirs and ZooKeeper of the broker configuration."""
    settings = broker_settings(path, overrides)
    checks = []
    for listener in _list(settings.get("listeners") or DEFAULT_LISTENERS):
        host, port = listener_address(listener)
        checks.append(check_port("listeners", host, port))
    if settings.get("metrics.http.listener"):
        host, port = listener_address(settings["metrics.http.listener"])
        checks.append(check_port("metrics.http.listener", host, port))
    log_dirs = _list(settings.get("log.dirs") or settings.get("log.dir") or DEFAULT_LOG_DIR)
    checks.extend(check_log_dir(Path(directory)) for directory in log_dirs)
    if settings.get("zookeeper.connect"):
        checks.append(check_zookeeper(settings["zookeeper.connect"]))
    return checks


def broker_settings(path: Path | None, overrides: list[str]) -> dict[str, str]:
    """The properties of ``path`` (``key=value`` or ``key: value`` lines) with ``overrides`` on top.

    The broker itself validates every property when it starts; the doctor reads only the few it checks.
    """
    settings: dict[str, str] = {}
    if path is not None:
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise CliError(f"cannot read the broker configuration {path}: {exc.strerror or exc}") from exc
        for line in lines:
            if line.strip() and not line.lstrip().startswith(("#", "!")):
                key, value = _key_value(line)
                settings[key] = value
    for override in overrides:
        if "=" not in override:
            raise CliError(f"--override {override!r} is not KEY=VALUE")
        key, value = _key_value(override)
        settings[key] = value
    return settings


def _key_value(line: str) -> tuple[str, str]:
    separator = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=len(line))
    return line[:separator].strip(), line[separator + 1:].strip()


def _list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def report(checks: list[Check], output: str) -> None:
    if output == "json":
        print_json({"ok": all(check.ok for check in checks), "checks": [check.document() for check in checks]})
        return
    for check in checks:
        line = f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}"
        if check.fix:
            line += f" -> fix: {check.fix}"
        print(line, file=sys.stdout)
