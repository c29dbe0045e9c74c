"""``spate cluster up``: ZooKeeper and N brokers on this machine, in the foreground, for development.

Once every broker answers Metadata the bootstrap list is printed on stdout
(one line, e.g. ``127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094``); then a
live table shows each broker's address, whether it is alive, how many
partitions it leads and which one is the controller, refreshed every couple
of seconds (``--no-status``: nothing more is printed, for scripts). With
``--output json`` the first line is a JSON document (bootstrap servers,
ZooKeeper, each broker's address and log, with ``--monitoring`` its metrics
URL and the Prometheus config written) and the status is one JSON line
per refresh instead of the table. SIGTERM
or Ctrl-C stops the brokers, then ZooKeeper, and exits 0. A child that dies
during start-up, or a start-up that outlasts ``--start-timeout-ms``, stops
everything and exits 1 with the end of that child's log. The processes are
described in :mod:`spate.cli.local_cluster`.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from spate.cli.common import (
    add_output_argument,
    console,
    key_value,
    positive_int,
    print_json,
    stderr_is_terminal,
)
from spate.cli.errors import CliError
from spate.cli.local_cluster import ChildProcess, LocalCluster
from spate.cli.monitoring import free_ports, metrics_urls, where_to_look, write_prometheus_config
from spate.cli.secure_cluster import ADMIN_USER
from spate.cli.secure_cluster import prepare as prepare_secure
from spate.cli.zookeeper import port_number
from spate.client import Admin, ClientError, ClusterDescription, KafkaError

DEFAULT_BROKERS = 3
DEFAULT_BASE_PORT = 9092
DEFAULT_ZOOKEEPER_PORT = 2181
DEFAULT_START_TIMEOUT_MS = 60_000
DEFAULT_STOP_TIMEOUT_MS = 30_000
REFRESH_S = 2.0
# One status refresh may take this long before the table says the cluster did not answer.
_STATUS_TIMEOUT_MS = 1_500


def register(commands: argparse._SubParsersAction) -> None:
    up = commands.add_parser(
        "up",
        help="run ZooKeeper and N brokers on this machine in the foreground (development)",
        description="Start ZooKeeper and N brokers as child processes, print the bootstrap servers once every "
        "broker answers, then show a live status table. SIGTERM or Ctrl-C stops the brokers, then ZooKeeper. "
        "Each child logs to DATA_DIR/<name>.log.",
    )
    up.add_argument("--brokers", type=positive_int, default=DEFAULT_BROKERS, metavar="N",
                    help=f"how many brokers (default: {DEFAULT_BROKERS}); broker i gets broker.id=i")
    up.add_argument("--data-dir", type=Path, required=True, metavar="DIR",
                    help="where ZooKeeper, the brokers and their logs keep their files")
    up.add_argument("--base-port", type=port_number, default=DEFAULT_BASE_PORT, metavar="P",
                    help=f"broker i listens on 127.0.0.1:P+i (default: {DEFAULT_BASE_PORT})")
    up.add_argument("--zookeeper-port", type=port_number, default=DEFAULT_ZOOKEEPER_PORT, metavar="Z",
                    help=f"ZooKeeper's client port (default: {DEFAULT_ZOOKEEPER_PORT})")
    up.add_argument("--override", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                    help="a broker property for every broker (Kafka's names); repeatable")
    up.add_argument("--secure", action="store_true",
                    help="SASL_SSL (SCRAM-SHA-512) for clients and brokers: certificates in DIR/certs, an admin "
                         "user, and DIR/client.properties for --command-config")
    up.add_argument("--monitoring", action="store_true",
                    help="every broker serves Prometheus metrics on a free port (GET /metrics); the ports, a "
                    "Prometheus scrape config (DATA_DIR/prometheus.yml) and the Grafana dashboard are printed")
    up.add_argument("--no-status", action="store_true",
                    help="print the bootstrap line, then wait quietly until stopped (for scripts)")
    up.add_argument("--start-timeout-ms", type=positive_int, default=DEFAULT_START_TIMEOUT_MS, metavar="MS",
                    help=f"give up starting after this long (default: {DEFAULT_START_TIMEOUT_MS})")
    up.add_argument("--stop-timeout-ms", type=positive_int, default=DEFAULT_STOP_TIMEOUT_MS, metavar="MS",
                    help=f"how long each process may take to stop before it is killed (default: {DEFAULT_STOP_TIMEOUT_MS})")
    add_output_argument(up)
    up.set_defaults(func=run_up)


def run_up(args: argparse.Namespace) -> int:
    last_port = args.base_port + args.brokers - 1
    if last_port > 65535:
        raise CliError(f"--base-port {args.base_port} leaves no port for broker {args.brokers - 1}", exit_code=2)
    if args.base_port <= args.zookeeper_port <= last_port:
        raise CliError(f"--zookeeper-port {args.zookeeper_port} is one of the brokers' ports", exit_code=2)
    taken = {args.zookeeper_port, *range(args.base_port, last_port + 1)}
    bootstrap = ",".join(f"127.0.0.1:{port}" for port in range(args.base_port, last_port + 1))
    cluster = LocalCluster(args.data_dir, args.brokers, args.base_port, args.zookeeper_port,
                           overrides=[f"{k}={v}" for k, v in args.override],
                           metrics_ports=free_ports(args.brokers, taken) if args.monitoring else [],
                           secure=prepare_secure(args.data_dir, bootstrap) if args.secure else None)
    stopping = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            with startup_progress(args.output == "json") as on_progress:
                started = cluster.start(time.monotonic() + args.start_timeout_ms / 1000, stopping.is_set,
                                        on_progress)
            if not started:
                return 0  # stopped while starting
            if args.output == "json":
                print_json(_started_document(cluster))
            else:
                print(cluster.bootstrap, flush=True)
            print(f"spate: {args.brokers} broker(s) up, ZooKeeper on 127.0.0.1:{args.zookeeper_port}, "
                  f"logs in {args.data_dir}; SIGTERM or Ctrl-C stops them", file=sys.stderr, flush=True)
            if cluster.secure is not None:
                print(f"spate: SASL_SSL with SCRAM-SHA-512 as user {ADMIN_USER}; client properties in "
                      f"{cluster.secure.properties} (--command-config, Kafka's tools) and "
                      f"{cluster.secure.confluent_properties} (confluent-kafka, kcat)", file=sys.stderr, flush=True)
            if cluster.metrics_ports:
                print(where_to_look(cluster.metrics_ports, _prometheus_config_path(cluster)), file=sys.stderr,
                      flush=True)
                print(f"spate: web console: spate console --bootstrap-server {cluster.bootstrap}", file=sys.stderr)
            if args.no_status:
                _wait_quietly(cluster, stopping)
            else:
                _show_status(cluster, stopping, as_json=args.output == "json")
        finally:
            _stop(cluster, args.stop_timeout_ms / 1000)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


@contextlib.contextmanager
def startup_progress(as_json: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar of the children ready, on stderr when it is a terminal and the output is not JSON."""
    if as_json or not stderr_is_terminal():
        yield None
        return
    progress = Progress(TextColumn("starting ZooKeeper and the brokers"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True)
    task = progress.add_task("start", total=None)
    with progress:
        yield lambda ready, total: progress.update(task, completed=ready, total=total)


def _stop(cluster: LocalCluster, timeout: float) -> None:
    if not any(child.running for child in cluster.children):
        return
    print("spate: stopping the brokers, then ZooKeeper", file=sys.stderr, flush=True)
    killed = cluster.stop(timeout)
    if killed:
        print(f"spate: killed {', '.join(killed)} after {timeout:g}s without stopping", file=sys.stderr, flush=True)


def _report_exits(cluster: LocalCluster) -> None:
    """One line on stderr per child that exited since the last look; CliError once all have."""
    for child in cluster.children:
        if child.exit_code is not None and not child.reported:
            child.reported = True
            print(f"spate: {child.name} exited with code {child.exit_code} (see {child.log_path})",
                  file=sys.stderr, flush=True)
    _check_some_alive(cluster)


def _wait_quietly(cluster: LocalCluster, stopping: threading.Event) -> None:
    while not stopping.wait(REFRESH_S / 4):
        _report_exits(cluster)


# --- the status table ----------------------------------------------------------------------------


def _show_status(cluster: LocalCluster, stopping: threading.Event, *, as_json: bool) -> None:
    with Admin(cluster.bootstrap, default_api_timeout_ms=_STATUS_TIMEOUT_MS, request_timeout_ms=_STATUS_TIMEOUT_MS,
               connect_timeout_ms=_STATUS_TIMEOUT_MS, client_id="spate-cluster-up", **cluster.client_settings) as admin:
        if as_json:
            while True:
                print_json(status_document(cluster, *_observe(admin)))
                sys.stdout.flush()
                if stopping.wait(REFRESH_S):
                    return
                _check_some_alive(cluster)
        with Live(status_table(cluster, *_observe(admin)), console=console(), auto_refresh=False) as live:
            while not stopping.wait(REFRESH_S):
                _check_some_alive(cluster)
                live.update(status_table(cluster, *_observe(admin)), refresh=True)


def _check_some_alive(cluster: LocalCluster) -> None:
    if all(child.exit_code is not None for child in cluster.children):
        raise CliError("every process of the cluster has exited")


def _prometheus_config_path(cluster: LocalCluster) -> Path:
    return write_prometheus_config(cluster.data_dir, cluster.metrics_ports)


def _started_document(cluster: LocalCluster) -> dict[str, Any]:
    document: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap,
        "zookeeper": {"address": f"127.0.0.1:{cluster.zookeeper_port}", "log": str(cluster.zookeeper.log_path)},
        "brokers": [{"id": i, "address": cluster.address(i), "log": str(child.log_path)}
                    for i, child in enumerate(cluster.broker_processes)],
    }
    if cluster.secure is not None:
        document["client_properties"] = str(cluster.secure.properties)
        document["confluent_properties"] = str(cluster.secure.confluent_properties)
    if cluster.metrics_ports:
        for broker, url in zip(document["brokers"], metrics_urls(cluster.metrics_ports)):
            broker["metrics"] = url
        document["prometheus_config"] = str(_prometheus_config_path(cluster))
    return document


def status_document(
    cluster: LocalCluster, described: ClusterDescription | None, led: Counter[int], problem: str | None
) -> dict[str, Any]:
    """The status table as one JSON document; ``alive`` is null for a running broker the cluster did not describe."""
    listed = {b.node_id for b in described.brokers} if described is not None else set()
    return {
        "zookeeper": {"running": cluster.zookeeper.running, "exit_code": cluster.zookeeper.exit_code},
        "controller": described.controller_id if described is not None and described.controller_id >= 0 else None,
        "problem": problem,
        "brokers": [
            {"id": i, "address": cluster.address(i), "running": child.running, "exit_code": child.exit_code,
             "alive": (child.running and i in listed) if described is not None else None,
             "partitions_led": led.get(i, 0) if described is not None else None}
            for i, child in enumerate(cluster.broker_processes)
        ],
    }


def _observe(admin: Admin) -> tuple[ClusterDescription | None, Counter[int], str | None]:
    """The cluster as the brokers describe it, the partitions each leads, or why they did not answer."""
    try:
        described = admin.describe_cluster()
        topics = admin.describe_topics()
    except (ClientError, KafkaError) as exc:
        return None, Counter(), str(exc).splitlines()[0]
    led = Counter(p.leader for t in topics.values() for p in t.partitions if p.leader >= 0)
    return described, led, None


def status_table(
    cluster: LocalCluster, described: ClusterDescription | None, led: Counter[int], problem: str | None
) -> Table:
    """One row per broker: id, address, alive, partitions led and the controller's mark."""
    listed = {b.node_id for b in described.brokers} if described is not None else set()
    controller = described.controller_id if described is not None else -1
    table = Table("Broker", "Address", "Alive", "Partitions led", "Controller",
                  title=f"spate cluster: {cluster.bootstrap}",
                  caption=f"ZooKeeper 127.0.0.1:{cluster.zookeeper_port}: {_alive(cluster.zookeeper, None)}"
                  + (f" · no answer from the brokers: {problem}" if problem else "")
                  + f" · refreshed every {REFRESH_S:g}s · Ctrl-C stops the cluster")
    for broker_id, child in enumerate(cluster.broker_processes):
        table.add_row(str(broker_id), cluster.address(broker_id),
                      _alive(child, None if described is None else broker_id in listed),
                      str(led.get(broker_id, 0)) if described is not None else "?",
                      "*" if broker_id == controller else "")
    return table


def _alive(child: ChildProcess, listed: bool | None) -> str:
    """``listed``: whether the cluster lists it (None: the cluster did not answer)."""
    if child.exit_code is not None:
        return f"no (exited {child.exit_code})"
    if listed is None:
        return "running"
    return "yes" if listed else "running, not in the cluster"
