"""``spate cluster describe``: cluster id, controller, brokers and how many topics exist."""

from __future__ import annotations

import argparse

from rich.table import Table

from spate.cli.common import add_connection_arguments, client_errors, command_group, console
from spate.client import Admin


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "cluster", "inspect the cluster")
    describe = commands.add_parser("describe", help="cluster id, controller, brokers and topic count")
    add_connection_arguments(describe)
    describe.set_defaults(func=run_describe)


def run_describe(args: argparse.Namespace) -> int:
    with client_errors(args.bootstrap_server):
        with Admin(args.bootstrap_server, default_api_timeout_ms=args.api_timeout_ms,
                   request_timeout_ms=args.api_timeout_ms, client_id="spate-cli") as admin:
            cluster = admin.describe_cluster()
            topics = admin.list_topics()
    out = console()
    out.print(f"Cluster id: {cluster.cluster_id or 'unknown'}")
    controller = cluster.controller
    out.print(f"Controller: {controller.node_id} ({controller.address})" if controller else "Controller: unknown")
    out.print(f"Topics: {len(topics)}")
    table = Table("Broker", "Host", "Port", "Rack", "Controller", title="Brokers")
    for broker in sorted(cluster.brokers, key=lambda b: b.node_id):
        table.add_row(str(broker.node_id), broker.host, str(broker.port), broker.rack or "",
                      "yes" if broker.node_id == cluster.controller_id else "")
    out.print(table)
    return 0
