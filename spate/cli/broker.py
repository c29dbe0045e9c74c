"""``spate broker start``: run one broker in the foreground until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from spate.cli.common import command_group
from spate.cli.errors import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "broker", "run a broker")
    start = commands.add_parser(
        "start",
        help="start a broker in the foreground",
        description="Start a broker in the foreground. It logs to stderr and stops cleanly on SIGTERM or "
        "Ctrl-C. Without --config Kafka's built-in defaults apply; conf/broker.properties is the file to start "
        "from (it also sets group.initial.rebalance.delay.ms=0 for development, as Kafka's server.properties does).",
    )
    start.add_argument("--config", type=Path, metavar="FILE", help="a broker.properties file")
    start.add_argument(
        "--override", action="append", default=[], metavar="KEY=VALUE",
        help="set a property on top of the file (Kafka's names, e.g. log.dirs=/data/spate); repeatable",
    )
    start.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    start.set_defaults(func=run_start)


def run_start(args: argparse.Namespace) -> int:
    # The broker is loaded only here: every other command is a client and stays light.
    from broker_core.cluster.errors import MetadataError
    from broker_core.config.broker_config import load_broker_config
    from broker_core.config.errors import ConfigError
    from broker_core.server import gc_policy
    from broker_core.storage.errors import StorageError

    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        config = load_broker_config(args.config, args.override)
    except ConfigError as exc:
        raise CliError(f"invalid configuration: {exc}") from None
    try:
        collector = gc_policy.policy_from_env(os.environ)
    except gc_policy.GcPolicyError as exc:
        raise CliError(str(exc)) from None
    try:
        asyncio.run(_serve(config, collector))
    except (ConfigError, StorageError, MetadataError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot start the broker: {exc}") from None
    return 0


async def _serve(config, collector) -> None:
    from broker_core.server.broker import Broker

    broker = Broker(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, broker.request_stop)
    try:
        await broker.start()
        frozen = collector.apply()
        logging.getLogger(__name__).info(
            "garbage collector: %s policy (%d objects of start-up frozen, thresholds %s)",
            collector.name, frozen, collector.thresholds or "unchanged",
        )
        await broker.serve_until_stopped()
    finally:
        await broker.stop()
