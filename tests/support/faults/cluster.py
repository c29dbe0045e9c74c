"""A cluster whose every link between brokers, and to ZooKeeper, can be cut: the replication fault tests' stage.

Each broker has two listeners: ``CLIENT`` (clients and the harness talk to
it directly) and ``REPLICATION`` (``inter.broker.listener.name``: the
controller and replica fetchers). The REPLICATION listener is advertised as
the address of a :class:`~tests.support.proxy.TcpProxy` in front of it, and
each broker reaches ZooKeeper through a proxy of its own. So a test can

* cut one broker off from the other brokers (both ways: its REPLICATION
  proxy refuses the others, and theirs refuse it, told apart by the process
  that owns each connecting socket) and from ZooKeeper, while clients still
  reach it on its client listener: :meth:`FaultCluster.isolate` /
  :meth:`FaultCluster.heal`; or cut a single link between two brokers, or a
  broker's ZooKeeper link alone (cut, or silent);
* crash (SIGKILL), pause (SIGSTOP), resume (SIGCONT) and restart broker
  processes.

It is a :class:`~tests.support.cluster.ClusterForTests` otherwise (waits for
metadata, the controller, leaders), plus the reads the checks need: a
partition's high watermark from its leader, and the differences between its
replicas' logs on disk (:mod:`tests.support.faults.replica_logs`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Iterable

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess
from tests.support.cluster import ClusterForTests
from tests.support.controller_requests import call
from tests.support.faults.replica_logs import ReplicaDifference, compare_replicas
from tests.support.ports import free_port
from tests.support.proxy import TcpProxy
from tests.support.socket_owner import owner_pid
from tests.support.zookeeper import ZooKeeperForTests

CLIENT_LISTENER = "CLIENT"
REPLICATION_LISTENER = "REPLICATION"
LATEST = -1
READ_UNCOMMITTED = 0


def broker_name(broker_id: int) -> str:
    """How the proxies name a broker's connections."""
    return f"broker-{broker_id}"


class FaultCluster(ClusterForTests):
    def __init__(
        self,
        base_dir: Path,
        zookeeper: ZooKeeperForTests,
        *,
        brokers: int = 3,
        overrides: dict[str, str] | None = None,
        broker_overrides: dict[int, dict[str, str]] | None = None,
    ) -> None:
        super().__init__(base_dir, zookeeper, brokers=brokers, overrides=overrides,
                         broker_overrides=broker_overrides)
        self.replication_proxies: dict[int, TcpProxy] = {}
        self.zookeeper_proxies: dict[int, TcpProxy] = {}
        self._paused: set[int] = set()
        zk_host, zk_port = zookeeper.connect_string.split(",")[0].rsplit(":", 1)
        for broker_id, broker in self.brokers.items():
            replication_port, proxy_port = free_port(), free_port()
            self.replication_proxies[broker_id] = TcpProxy(
                "127.0.0.1", replication_port, listen_port=proxy_port,
                identify=functools.partial(self._broker_connecting, proxy_port),
            )
            zk_proxy = self.zookeeper_proxies[broker_id] = TcpProxy(zk_host, int(zk_port))
            broker.overrides.update({
                "listeners": f"{CLIENT_LISTENER}://127.0.0.1:{broker.port},"
                             f"{REPLICATION_LISTENER}://127.0.0.1:{replication_port}",
                "advertised.listeners": f"{CLIENT_LISTENER}://127.0.0.1:{broker.port},"
                                        f"{REPLICATION_LISTENER}://127.0.0.1:{proxy_port}",
                "listener.security.protocol.map": f"{CLIENT_LISTENER}:PLAINTEXT,{REPLICATION_LISTENER}:PLAINTEXT",
                "inter.broker.listener.name": REPLICATION_LISTENER,
                "zookeeper.connect": f"127.0.0.1:{zk_proxy.port}{self.chroot}",
            })

    def _broker_connecting(self, proxy_port: int, peer: tuple[str, int]) -> str | None:
        """The name of the broker process whose socket connects from ``peer`` to ``proxy_port``, if any."""
        pids = {b.process.pid: broker_id for broker_id, b in self.brokers.items()
                if b.process is not None and b.exit_code is None}
        pid = owner_pid(peer, proxy_port, pids)
        return None if pid is None else broker_name(pids[pid])

    def close(self) -> None:
        for broker_id in list(self._paused):
            self.resume(broker_id)
        super().close()
        for proxy in (*self.replication_proxies.values(), *self.zookeeper_proxies.values()):
            proxy.close()

    # --- processes ----------------------------------------------------------------------------

    def pause(self, broker_id: int) -> None:
        """SIGSTOP: the broker freezes mid-whatever, its sockets open, until :meth:`resume`."""
        self._signal(broker_id, signal.SIGSTOP)
        self._paused.add(broker_id)

    def resume(self, broker_id: int) -> None:
        """SIGCONT: a paused broker carries on, finding out what happened meanwhile."""
        self._signal(broker_id, signal.SIGCONT)
        self._paused.discard(broker_id)

    def kill(self, broker_id: int) -> None:
        """SIGKILL (a paused broker too): the crash path."""
        super().kill(broker_id)
        self._paused.discard(broker_id)

    def stop(self, broker_id: int, timeout: float = 60.0) -> int:
        """SIGTERM (a paused broker is resumed first): controlled shutdown, then a clean stop."""
        if broker_id in self._paused:
            self.resume(broker_id)
        return super().stop(broker_id, timeout)

    def restart(self, broker_id: int, *, clean: bool = True) -> BrokerProcess:
        """Stop (SIGTERM when ``clean``, else SIGKILL) and start again with the same id, ports and data."""
        if broker_id in self._paused:
            if clean:
                self.resume(broker_id)
            else:
                self._paused.discard(broker_id)
        return super().restart(broker_id, clean=clean)

    def live(self) -> list[BrokerProcess]:
        """Running brokers that are not paused (a paused one answers nothing)."""
        return [self.brokers[i] for i in self.live_ids()]

    def live_ids(self) -> list[int]:
        return [i for i in super().live_ids() if i not in self._paused]

    def paused_ids(self) -> list[int]:
        return sorted(self._paused)

    def pid(self, broker_id: int) -> int:
        process = self.brokers[broker_id].process
        if process is None or process.poll() is not None:
            raise AssertionError(f"broker {broker_id} is not running")
        return process.pid

    def _signal(self, broker_id: int, signum: signal.Signals) -> None:
        os.kill(self.pid(broker_id), signum)

    # --- the network --------------------------------------------------------------------------

    def isolate(self, broker_id: int) -> None:
        """Cut ``broker_id`` off from every other broker (both ways) and from ZooKeeper; clients still reach it."""
        self.isolate_from_brokers(broker_id)
        self.cut_zookeeper(broker_id)

    def isolate_from_brokers(self, broker_id: int) -> None:
        for other in self.brokers:
            if other != broker_id:
                self.cut_link(broker_id, other)

    def heal(self, broker_id: int | None = None) -> None:
        """Restore every link of ``broker_id`` (of every broker when None)."""
        for one in ([broker_id] if broker_id is not None else list(self.brokers)):
            for other in self.brokers:
                if other != one:
                    self.restore_link(one, other)
            self.restore_zookeeper(one)

    def cut_link(self, a: int, b: int) -> None:
        """Neither broker reaches the other's REPLICATION listener; their open connections are reset."""
        self.replication_proxies[a].cut_off(broker_name(b))
        self.replication_proxies[b].cut_off(broker_name(a))

    def restore_link(self, a: int, b: int) -> None:
        self.replication_proxies[a].restore(broker_name(b))
        self.replication_proxies[b].restore(broker_name(a))

    def cut_zookeeper(self, broker_id: int) -> None:
        """The broker's ZooKeeper connection is reset and new ones refused: its session expires on time."""
        self.zookeeper_proxies[broker_id].partition()

    def silence_zookeeper(self, broker_id: int) -> None:
        """The broker's ZooKeeper connection stays open but nothing passes (a silent network)."""
        self.zookeeper_proxies[broker_id].blackhole()

    def restore_zookeeper(self, broker_id: int) -> None:
        self.zookeeper_proxies[broker_id].heal()

    @contextlib.contextmanager
    def isolated(self, broker_id: int) -> Iterator[None]:
        """``with cluster.isolated(2): ...`` isolates broker 2 for the block and heals it afterwards."""
        self.isolate(broker_id)
        try:
            yield
        finally:
            self.heal(broker_id)

    # --- topics and replicas ------------------------------------------------------------------

    def create_topic(self, name: str, *, partitions: int = 3, replication_factor: int = 3,
                     configs: Mapping[str, str] | None = None) -> None:
        """Create through a live broker and wait until every live broker knows every partition's leader."""
        address = self.address(self.live_ids()[0])
        result = create_topic(address, name, partitions=partitions, replication_factor=replication_factor,
                              configs={"min.insync.replicas": str(min(2, replication_factor)), **(configs or {})})
        if result.error_code != 0:
            raise AssertionError(f"creating {name} failed with error {result.error_code}: {result.error_message}")
        self.wait_for_metadata([name])

    def high_watermark(self, topic: str, partition: int) -> int:
        """The partition's high watermark, as its leader answers ListOffsets LATEST (read_uncommitted)."""
        Q = ListOffsetsRequest
        body = Q(isolation_level=READ_UNCOMMITTED, topics=[Q.ListOffsetsTopic(name=topic, partitions=[
            Q.ListOffsetsPartition(partition_index=partition, timestamp=LATEST)])])
        answer = call(self.address(self.leader_of(topic, partition)), ApiKey.LIST_OFFSETS, 5, body)
        found = answer.topics[0].partitions[0]
        if found.error_code != 0:
            raise AssertionError(f"ListOffsets for {topic}-{partition} failed with error {found.error_code}")
        return found.offset

    def partition_dirs(self, topic: str, partition: int, brokers: Iterable[int] | None = None) -> dict[int, Path]:
        """Each broker's directory for the partition (of ``brokers``, by default every one that has it)."""
        chosen = list(brokers) if brokers is not None else list(self.brokers)
        dirs = {broker_id: self.brokers[broker_id].log_dir / f"{topic}-{partition}" for broker_id in chosen}
        return {broker_id: path for broker_id, path in dirs.items() if brokers is not None or path.is_dir()}

    def replica_differences(self, topic: str, partition: int, *, brokers: Iterable[int] | None = None,
                            high_watermark: int | None = None) -> list[ReplicaDifference]:
        """How the replicas' logs differ below the high watermark (asked of the leader unless given)."""
        if high_watermark is None:
            high_watermark = self.high_watermark(topic, partition)
        return compare_replicas(self.partition_dirs(topic, partition, brokers), high_watermark)


@contextlib.contextmanager
def running_fault_cluster(base_dir: Path, zookeeper: ZooKeeperForTests, **kwargs: Any) -> Iterator[FaultCluster]:
    cluster = FaultCluster(base_dir, zookeeper, **kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.close()
