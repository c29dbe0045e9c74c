"""``spate cluster describe|up``: what the cluster looks like, and a local cluster for development.

``describe`` shows the cluster id, the controller, every broker (live ones as
the cluster lists them; brokers that replicas name but the cluster does not
list as not alive) and, per topic, how many partitions each broker leads.
The controller's epoch is not carried by DescribeCluster or Metadata: with
``--zookeeper`` it is read from ``/controller_epoch`` (as Kafka's
``zookeeper-shell`` would), otherwise it is shown as unknown rather than
guessed. ``up`` lives in :mod:`spate.cli.cluster_up`.
"""

from __future__ import annotations

import argparse
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from rich.table import Table

from spate.cli import cluster_up
from spate.cli.common import (
    add_connection_arguments,
    add_output_argument,
    client_errors,
    command_group,
    console,
    open_admin,
    print_json,
)
from spate.cli.errors import CliError
from spate.client import BrokerDescription, ClusterDescription, TopicDescription


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "cluster", "inspect the cluster, or run one locally")
    describe = commands.add_parser(
        "describe", help="cluster id, controller, brokers and the partition leaders of each topic"
    )
    add_connection_arguments(describe)
    add_output_argument(describe)
    describe.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]",
                          help="also read the controller epoch from this ZooKeeper (the brokers' zookeeper.connect)")
    describe.set_defaults(func=run_describe)
    cluster_up.register(commands)


@dataclass(frozen=True)
class TopicLeaders:
    """How many partitions of one topic each broker leads, and how many have no leader."""

    name: str
    partitions: int
    internal: bool
    by_broker: dict[int, int]
    leaderless: int

    @classmethod
    def of(cls, topic: TopicDescription) -> TopicLeaders:
        counts = Counter(p.leader for p in topic.partitions)
        leaderless = sum(n for leader, n in counts.items() if leader < 0)
        led = {leader: n for leader, n in sorted(counts.items()) if leader >= 0}
        return cls(topic.name, len(topic.partitions), topic.is_internal, led, leaderless)


def absent_brokers(cluster: ClusterDescription, topics: Iterable[TopicDescription]) -> list[int]:
    """Broker ids that replicas name but the cluster does not list: brokers that are down."""
    live = {b.node_id for b in cluster.brokers}
    named = {r for t in topics for p in t.partitions for r in (*p.replicas, *p.offline_replicas)}
    return sorted(named - live)


def run_describe(args: argparse.Namespace) -> int:
    with open_admin(args) as admin, client_errors(args.bootstrap_server):
        cluster = admin.describe_cluster()
        topics = list(admin.describe_topics().values())
    leaders = [TopicLeaders.of(t) for t in topics]
    down = absent_brokers(cluster, topics)
    epoch = controller_epoch(args.zookeeper, args.api_timeout_ms / 1000) if args.zookeeper else None
    if args.output == "json":
        print_json(_describe_document(cluster, leaders, down, epoch))
        return 0
    out = console()
    out.print(f"Cluster id: {cluster.cluster_id or 'unknown'}")
    controller = cluster.controller
    out.print(f"Controller: {controller.node_id} ({controller.address})" if controller else "Controller: unknown")
    out.print(f"Controller epoch: {epoch if epoch is not None else 'unknown (--zookeeper reads it)'}")
    out.print(f"Topics: {sum(1 for t in leaders if not t.internal)}")
    table = Table("Broker", "Address", "Rack", "Alive", "Controller", title="Brokers")
    for broker in cluster.brokers:
        table.add_row(str(broker.node_id), broker.address, broker.rack or "", "yes",
                      "yes" if broker.node_id == cluster.controller_id else "")
    for node_id in down:
        table.add_row(str(node_id), "-", "", "no", "")
    out.print(table)
    if leaders:
        out.print(_leaders_table(leaders))
    return 0


def _leaders_table(leaders: list[TopicLeaders]) -> Table:
    table = Table("Topic", "Partitions", "Leaders (broker: partitions)", "No leader", title="Partition leaders")
    for topic in leaders:
        led = ", ".join(f"{broker}: {count}" for broker, count in topic.by_broker.items())
        table.add_row(topic.name + (" (internal)" if topic.internal else ""), str(topic.partitions), led or "-",
                      str(topic.leaderless) if topic.leaderless else "")
    return table


def broker_document(broker: BrokerDescription) -> dict[str, Any]:
    return {"id": broker.node_id, "host": broker.host, "port": broker.port, "rack": broker.rack}


def controller_epoch(connect: str, timeout_s: float) -> int:
    """``/controller_epoch`` from the ZooKeeper at ``connect`` (Kafka's ``host:port[,...][/chroot]``)."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import KazooException, NoNodeError
    from kazoo.handlers.threading import KazooTimeoutError

    # kazoo logs every failed connection attempt with a traceback; the one-line error below says it all.
    quiet = logging.getLogger("spate.cli.zookeeper-client")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    client = KazooClient(hosts=connect, timeout=timeout_s, read_only=True, logger=quiet)
    try:
        client.start(timeout=timeout_s)
        data, _ = client.get("/controller_epoch")
        return int(data)
    except NoNodeError:
        raise CliError(f"ZooKeeper at {connect} has no /controller_epoch: no controller was elected there") from None
    except (KazooException, KazooTimeoutError, ValueError, OSError) as exc:
        reason = str(exc) or type(exc).__name__
        raise CliError(f"cannot read the controller epoch from ZooKeeper at {connect}: {reason}") from None
    finally:
        client.stop()
        client.close()


def _describe_document(
    cluster: ClusterDescription, leaders: list[TopicLeaders], down: list[int], epoch: int | None = None
) -> dict[str, Any]:
    controller = cluster.controller
    return {
        "cluster_id": cluster.cluster_id,
        "controller": broker_document(controller) if controller else None,
        "controller_epoch": epoch,  # None unless read from ZooKeeper: no client API carries it
        "brokers": [{**broker_document(b), "alive": True} for b in cluster.brokers]
        + [{"id": node_id, "host": None, "port": None, "rack": None, "alive": False} for node_id in down],
        "topics": [
            {"name": t.name, "internal": t.internal, "partitions": t.partitions,
             "leaders": {str(broker): count for broker, count in t.by_broker.items()}, "leaderless": t.leaderless}
            for t in leaders
        ],
    }
