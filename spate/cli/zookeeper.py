"""``spate zookeeper start``: run a ZooKeeper server in the foreground until SIGTERM or Ctrl-C.

The server is Apache ZooKeeper from the jars inside the pyspark package, run
with the Java that Spark already needs. Its log goes to stderr, one line per
event. SIGTERM or Ctrl-C stops it cleanly (exit 0); a missing Java, missing
jars or a taken port is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from spate.cli.common import command_group
from spate.cli.errors import CliError

DEFAULT_PORT = 2181
DEFAULT_HOST = "127.0.0.1"
_POLL_S = 0.5


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "zookeeper", "run a ZooKeeper server for a cluster")
    start = commands.add_parser(
        "start",
        help="start a ZooKeeper server in the foreground",
        description="Start a standalone ZooKeeper server in the foreground (ZooKeeper from the pyspark jars, "
        "run with Java). It logs to stderr and stops cleanly on SIGTERM or Ctrl-C. Point brokers at it with "
        "zookeeper.connect=HOST:PORT[/chroot].",
    )
    start.add_argument("--port", type=port_number, default=DEFAULT_PORT, help=f"client port (default: {DEFAULT_PORT})")
    start.add_argument("--data-dir", type=Path, required=True, metavar="DIR", help="where ZooKeeper keeps its data")
    start.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    start.add_argument(
        "--jaas-config", type=Path, metavar="FILE",
        help="accept SASL DIGEST-MD5 logins: a JAAS file whose Server section "
        "(org.apache.zookeeper.server.auth.DigestLoginModule) lists user_<name>=\"<password>\" options",
    )
    start.set_defaults(func=run_start)


def port_number(text: str) -> int:
    try:
        port = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is between 1 and 65535, not {port}")
    return port


def run_start(args: argparse.Namespace) -> int:
    # The broker's code is loaded only here: every other command is a client and stays light.
    from broker_core.cluster.zk.errors import ZooKeeperServerError
    from broker_core.cluster.zk.server import ZooKeeperServer
    from broker_core.cluster.zk.server_files import ZooKeeperServerConfig

    if args.jaas_config is not None and not args.jaas_config.is_file():
        raise CliError(f"--jaas-config: JAAS file {args.jaas_config} does not exist")
    server = ZooKeeperServer(ZooKeeperServerConfig(args.data_dir, port=args.port, host=args.host,
                                                   jaas_file=args.jaas_config))
    stopping = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stopping.set()
        server.terminate()  # forward; the loop below waits for it to finish

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            server.start()
        except ZooKeeperServerError as exc:
            if stopping.is_set():
                return 0  # stopped while it was starting
            raise CliError(str(exc)) from None
        print(f"spate: ZooKeeper serving on {server.connect_string}, data in {args.data_dir}", file=sys.stderr)
        while server.wait(_POLL_S) is None and not stopping.is_set():
            pass
        code = server.stop()
        if stopping.is_set():
            return 0
        raise CliError(f"ZooKeeper exited unexpectedly with code {code}")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
