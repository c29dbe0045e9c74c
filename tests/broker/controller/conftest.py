"""A controller under test: real ZooKeeper, real elections, and brokers that only record what they are told.

Each recording broker registers in ZooKeeper with a session of its own (so
closing that session is how it "dies"), answers the controller's requests on
a real socket, and contends for controller with a real ``ControllerElection``
whose winner runs a real ``KafkaController``. Tests write the admin znodes
themselves, as any broker handling an admin request would.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.controller_election import ControllerElection, Leadership
from broker_core.cluster.zk.znodes import (
    BrokerIdZNode,
    BrokerInfo,
    DeleteTopicZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicZNode,
)
from broker_core.config.broker_config import load_broker_config
from broker_core.controller.controller import KafkaController
from spate.protocol import ApiKey
from spate.protocol.messages.leader_and_isr import LeaderAndIsrResponse
from spate.protocol.messages.stop_replica import StopReplicaResponse
from spate.protocol.messages.update_metadata import UpdateMetadataResponse
from spate.structs import TopicPartition
from tests.spate.client.fake_broker import FakeBroker
from tests.support.zookeeper import ZooKeeperForTests, wait_until

WAIT_S = 20.0


class RecordingBroker:
    """A broker that registers, contends for controller and records every controller request."""

    def __init__(self, cluster: ControllerCluster, broker_id: int, rack: str | None = None) -> None:
        self.cluster = cluster
        self.broker_id = broker_id
        self.rack = rack
        self.requests: list[tuple[ApiKey, Any]] = []
        self.failing_deletes = False
        # Partitions answered KAFKA_STORAGE_ERROR in LeaderAndIsr: their log dir "failed" here.
        self.failed_log_dir: set[TopicPartition] = set()
        self._lock = threading.Lock()
        self._fake = FakeBroker(self._answer)
        self.session: ZkSession | None = None
        self.election: ControllerElection | None = None
        self.controller: KafkaController | None = None

    @property
    def port(self) -> int:
        return self._fake.port

    def start(self) -> RecordingBroker:
        self.session = self.cluster.zookeeper.session(self.cluster.chroot)
        registration = BrokerRegistration(self.broker_id, "127.0.0.1", self.port, self.rack)
        info = BrokerInfo.from_registration(registration, int(time.time() * 1000))
        self.session.ensure_path("/brokers/ids")
        self.session.create(BrokerIdZNode.path(self.broker_id), BrokerIdZNode.encode(info), ephemeral=True)
        if self.cluster.with_elections:
            self.election = ControllerElection(
                self.session, self.broker_id, on_elected=self._elected, on_resigned=self._resigned
            )
            self.election.start()
        return self

    def kill(self) -> None:
        """Vanish as a crashed broker does: the session closes, its ephemeral znodes go."""
        if self.election is not None:
            self.election.stop()
        self._resigned()
        if self.session is not None:
            self.session.close()
        self.session = None

    def _elected(self, leadership: Leadership) -> None:
        config = load_broker_config(None, [
            f"broker.id={self.broker_id}",
            f"zookeeper.connect={self.cluster.zookeeper.connect_string}{self.cluster.chroot}",
            "auto.leader.rebalance.enable=false",
            "controller.socket.timeout.ms=5000",
        ])
        self.controller = KafkaController(config, self.session, leadership)
        self.controller.start()

    def _resigned(self) -> None:
        controller, self.controller = self.controller, None
        if controller is not None:
            controller.stop()

    # --- what the broker was told --------------------------------------------------------

    def _answer(self, key: ApiKey, version: int, body: Any) -> Any:
        with self._lock:
            self.requests.append((key, body))
        if key == ApiKey.LEADER_AND_ISR:
            R = LeaderAndIsrResponse
            return R(error_code=0, topics=[
                R.LeaderAndIsrTopicError(topic_id=t.topic_id, partition_errors=[
                    R.LeaderAndIsrPartitionError(
                        partition_index=p.partition_index,
                        error_code=56 if TopicPartition(t.topic_name, p.partition_index) in self.failed_log_dir else 0,
                    )
                    for p in t.partition_states
                ])
                for t in body.topic_states
            ])
        if key == ApiKey.UPDATE_METADATA:
            return UpdateMetadataResponse(error_code=0)
        if key == ApiKey.STOP_REPLICA:
            error = 56 if self.failing_deletes else 0  # KAFKA_STORAGE_ERROR
            return StopReplicaResponse(error_code=0, partition_errors=[
                StopReplicaResponse.StopReplicaPartitionError(
                    topic_name=t.topic_name, partition_index=p.partition_index,
                    error_code=error if p.delete_partition else 0,
                )
                for t in body.topic_states for p in t.partition_states
            ])
        return None

    def received(self, key: ApiKey) -> list[Any]:
        with self._lock:
            return [body for k, body in self.requests if k == key]

    def leader_and_isr_for(self, tp: TopicPartition) -> list[Any]:
        """Every LeaderAndIsr partition state this broker got for ``tp``, oldest first."""
        return [
            state for body in self.received(ApiKey.LEADER_AND_ISR) for topic in body.topic_states
            if topic.topic_name == tp.topic for state in topic.partition_states if state.partition_index == tp.partition
        ]  # fmt: skip

    def metadata_leader(self, tp: TopicPartition) -> int | None:
        """The leader of ``tp`` in the newest UpdateMetadata that named it."""
        state = self.metadata_state(tp)
        return state.leader if state is not None else None

    def metadata_state(self, tp: TopicPartition) -> Any | None:
        """The partition state of ``tp`` in the newest UpdateMetadata that named it."""
        for body in reversed(self.received(ApiKey.UPDATE_METADATA)):
            for topic in body.topic_states:
                for state in topic.partition_states:
                    if topic.topic_name == tp.topic and state.partition_index == tp.partition:
                        return state
        return None

    def deleted(self, tp: TopicPartition) -> bool:
        return any(
            p.delete_partition for body in self.received(ApiKey.STOP_REPLICA) for t in body.topic_states
            if t.topic_name == tp.topic for p in t.partition_states if p.partition_index == tp.partition
        )  # fmt: skip

    def close(self) -> None:
        self.kill()
        self._fake.stop()


class ControllerCluster:
    def __init__(self, zookeeper: ZooKeeperForTests, *, with_elections: bool = True) -> None:
        self.zookeeper = zookeeper
        self.chroot = zookeeper.new_chroot()
        self.with_elections = with_elections
        self.admin = zookeeper.session(self.chroot)
        self.brokers: dict[int, RecordingBroker] = {}

    def add_broker(self, broker_id: int, rack: str | None = None) -> RecordingBroker:
        broker = RecordingBroker(self, broker_id, rack).start()
        self.brokers[broker_id] = broker
        return broker

    def controller(self) -> RecordingBroker:
        """The broker whose controller is active and already counts every registered broker as live."""

        def settled() -> RecordingBroker | None:
            for broker in self.brokers.values():
                controller = broker.controller
                if controller is not None and controller.is_active():
                    live = set(controller.context.live_brokers)
                    return broker if live == {b.broker_id for b in self.brokers.values() if b.session} else None
            return None

        return wait_until(settled, "an active controller that knows every broker", WAIT_S)

    # --- admin writes, as a broker handling admin requests makes them ---------------------------

    def create_topic(self, name: str, assignment: dict[int, tuple[int, ...]]) -> None:
        import uuid

        self.admin.ensure_path("/brokers/topics")
        self.admin.create(TopicZNode.path(name), TopicZNode.encode(TopicAssignment(uuid.uuid4(), assignment)))

    def add_partitions(self, name: str, added: dict[int, tuple[int, ...]]) -> None:
        data, stat = self.admin.get(TopicZNode.path(name))
        current = TopicZNode.decode(name, data)
        grown = TopicAssignment(current.topic_id, {**current.partitions, **added})
        self.admin.set(TopicZNode.path(name), TopicZNode.encode(grown), version=stat.version)

    def delete_topic(self, name: str) -> None:
        self.admin.ensure_path("/admin/delete_topics")
        self.admin.create(DeleteTopicZNode.path(name), DeleteTopicZNode.encode())

    def reassign(self, reassignment: dict[TopicPartition, tuple[int, ...]]) -> None:
        self.admin.ensure_path("/admin")
        self.admin.create(ReassignPartitionsZNode.path(), ReassignPartitionsZNode.encode(reassignment))

    def elect_preferred(self, partitions: list[TopicPartition]) -> None:
        self.admin.ensure_path("/admin")
        self.admin.create(PreferredReplicaElectionZNode.path(), PreferredReplicaElectionZNode.encode(partitions))

    def state(self, tp: TopicPartition) -> Any | None:
        try:
            data, stat = self.admin.get(TopicPartitionStateZNode.path(tp.topic, tp.partition))
        except Exception:
            return None
        return TopicPartitionStateZNode.decode(tp.topic, tp.partition, data)

    def wait_for_state(self, tp: TopicPartition, check: Callable[[Any], bool], what: str) -> Any:
        return wait_until(lambda: (lambda s: s if s is not None and check(s) else None)(self.state(tp)), what, WAIT_S)

    def exists(self, path: str) -> bool:
        return self.admin.exists(path) is not None

    def close(self) -> None:
        for broker in self.brokers.values():
            broker.close()


@pytest.fixture
def cluster(zookeeper: ZooKeeperForTests) -> Iterator[ControllerCluster]:
    harness = ControllerCluster(zookeeper)
    yield harness
    harness.close()
