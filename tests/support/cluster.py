"""A Spate cluster for tests: one ZooKeeper (its own chroot) and N broker processes in cluster mode.

Each broker is a ``spate broker start`` process (``BrokerProcess``) with
``zookeeper.connect``, its own ``broker.id`` (1..N), port and data
directory. A module starts one cluster and shares it; tests kill (SIGKILL),
stop (SIGTERM, the controlled shutdown path) and restart brokers, find the
controller, and wait, always for a bounded time, for the metadata every
broker serves to settle.

``claim_controller=True`` makes the harness hold ``/controller`` itself (as
broker :data:`FAKE_CONTROLLER_ID`), so no broker is elected: a test then
plays the controller by sending LeaderAndIsr / UpdateMetadata / StopReplica
itself (``tests.support.controller_requests``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable, Iterable

from kazoo.exceptions import NoNodeError

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.znodes.controller import ControllerRegistration, ControllerZNode
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.metadata import MetadataRequest
from tests.support.broker_process import BrokerProcess
from tests.support.controller_requests import call
from tests.support.zookeeper import ZooKeeperForTests

FAKE_CONTROLLER_ID = 1000
SETTLE_TIMEOUT_S = 60.0
# Short enough that a killed broker's registration goes quickly; long enough for a loaded test machine.
BROKER_SESSION_TIMEOUT_MS = 6000
METADATA_VERSION = 8


class ClusterForTests:
    def __init__(
        self,
        base_dir: Path,
        zookeeper: ZooKeeperForTests,
        *,
        brokers: int = 3,
        overrides: dict[str, str] | None = None,
        broker_overrides: dict[int, dict[str, str]] | None = None,
        claim_controller: bool = False,
    ) -> None:
        self.base_dir = base_dir
        self.zookeeper = zookeeper
        self.chroot = zookeeper.new_chroot()
        self.connect = zookeeper.connect_string + self.chroot
        self.claim_controller = claim_controller
        self.zk: ZkSession = zookeeper.session(self.chroot)
        self.brokers: dict[int, BrokerProcess] = {}
        for broker_id in range(1, brokers + 1):
            settings = {
                "zookeeper.connect": self.connect,
                "broker.id": str(broker_id),
                "zookeeper.session.timeout.ms": str(BROKER_SESSION_TIMEOUT_MS),
                "controlled.shutdown.retry.backoff.ms": "500",
                **(overrides or {}),
                **((broker_overrides or {}).get(broker_id, {})),
            }
            self.brokers[broker_id] = BrokerProcess(base_dir / f"broker-{broker_id}", overrides=settings)

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> ClusterForTests:
        if self.claim_controller:
            self.zk.create(ControllerZNode.path(), ControllerZNode.encode(ControllerRegistration(FAKE_CONTROLLER_ID)),
                           ephemeral=True)
        for broker in self.brokers.values():
            broker.start()
        return self

    def close(self) -> None:
        for broker in self.brokers.values():
            broker.kill()
        self.zk.close()

    def broker(self, broker_id: int) -> BrokerProcess:
        return self.brokers[broker_id]

    def address(self, broker_id: int) -> str:
        return self.brokers[broker_id].bootstrap

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.live())

    def live(self) -> list[BrokerProcess]:
        return [b for b in self.brokers.values() if b.process is not None and b.exit_code is None]

    def live_ids(self) -> list[int]:
        return [i for i, b in self.brokers.items() if b.process is not None and b.exit_code is None]

    def kill(self, broker_id: int) -> None:
        """SIGKILL: the broker's registration lasts until its ZooKeeper session expires."""
        self.brokers[broker_id].kill()

    def stop(self, broker_id: int, timeout: float = 60.0) -> int:
        """SIGTERM: controlled shutdown, then a clean stop; returns the exit code."""
        return self.brokers[broker_id].stop(timeout)

    def restart(self, broker_id: int, *, clean: bool = True) -> BrokerProcess:
        broker = self.brokers[broker_id]
        broker.stop(60.0) if clean else broker.kill()
        # A killed broker's old session must expire before the id can be registered again.
        self.wait_for(lambda: not self.registered(broker_id), f"broker {broker_id}'s old registration to go")
        return broker.start()

    # --- ZooKeeper -------------------------------------------------------------------------

    def registered(self, broker_id: int) -> bool:
        return self.zk.exists(f"/brokers/ids/{broker_id}") is not None

    def registered_ids(self) -> list[int]:
        return sorted(int(name) for name in self.zk.get_children("/brokers/ids"))

    def controller_id(self) -> int | None:
        try:
            data, _ = self.zk.get(ControllerZNode.path())
        except NoNodeError:
            return None
        return ControllerZNode.decode(data).broker_id

    # --- waiting ---------------------------------------------------------------------------

    @staticmethod
    def wait_for(predicate: Callable[[], Any], what: str, timeout: float = SETTLE_TIMEOUT_S) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                result = predicate()
            except (OSError, ConnectionError):
                result = None
            if result:
                return result
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.1)

    def metadata(self, broker_id: int, topics: Iterable[str] | None = None) -> Any:
        body = MetadataRequest(
            topics=None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=False,
        )
        return call(self.address(broker_id), ApiKey.METADATA, METADATA_VERSION, body)

    def wait_for_metadata(self, topics: Iterable[str] = (), timeout: float = SETTLE_TIMEOUT_S) -> None:
        """Until every live broker lists every live broker, and a leader for every partition of ``topics``."""
        wanted = list(topics)

        def settled() -> bool:
            live = set(self.live_ids())
            for broker_id in live:
                answer = self.metadata(broker_id, wanted or None)
                if {b.node_id for b in answer.brokers} != live:
                    return False
                for topic in answer.topics:
                    if wanted and (topic.error_code != 0 or not topic.partitions):
                        return False
                    if wanted and any(p.error_code != 0 or p.leader_id not in live for p in topic.partitions):
                        return False
            return True

        self.wait_for(settled, f"metadata to settle on brokers {self.live_ids()} for {wanted}", timeout)

    def leader_of(self, topic: str, partition: int = 0) -> int:
        answer = self.metadata(self.live_ids()[0], [topic])
        (found,) = answer.topics
        return next(p.leader_id for p in found.partitions if p.partition_index == partition)


@contextlib.contextmanager
def running_cluster(base_dir: Path, zookeeper: ZooKeeperForTests, **kwargs: Any) -> Iterator[ClusterForTests]:
    cluster = ClusterForTests(base_dir, zookeeper, **kwargs)
    try:
        yield cluster.start()
    finally:
        cluster.close()


@contextlib.contextmanager
def settled_cluster(base_dir: Path, zookeeper: ZooKeeperForTests, **kwargs: Any) -> Iterator[ClusterForTests]:
    """A running cluster whose controller is elected and whose brokers all answer metadata."""
    with running_cluster(base_dir, zookeeper, **kwargs) as cluster:
        cluster.wait_for(cluster.controller_id, "a controller to be elected")
        cluster.wait_for_metadata()
        yield cluster


def restart_stopped_brokers(cluster: ClusterForTests) -> None:
    """Start again every broker a test killed or stopped, and wait until all answer metadata."""
    for broker_id, broker in cluster.brokers.items():
        if broker.exit_code is not None:
            cluster.restart(broker_id)
    cluster.wait_for_metadata()
