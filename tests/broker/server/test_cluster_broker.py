"""A broker process in cluster mode, with the test playing the controller.

Two brokers share a ZooKeeper chroot whose ``/controller`` the test holds,
so neither is elected; the test sends them LeaderAndIsr, UpdateMetadata and
StopReplica itself and checks what they register, serve and refuse.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import (
    controlled_shutdown,
    create_partitions,
    describe_cluster,
    describe_topic_configs,
    find_group_coordinator,
    produce_one,
)
from tests.support.broker_process import BrokerProcess
from tests.support.cluster import FAKE_CONTROLLER_ID, ClusterForTests, running_cluster
from tests.support.controller_requests import (
    Broker,
    FakeController,
    PartitionSpec,
    call,
    send_leader_and_isr,
    send_stop_replica,
    send_update_metadata,
)
from tests.support.played_controller import announce, live_brokers

E = ErrorCode


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper) -> Iterator[ClusterForTests]:
    with running_cluster(
        tmp_path_factory.mktemp("cluster"), zookeeper, brokers=2, claim_controller=True,
        overrides={"offsets.topic.num.partitions": "3", "offsets.topic.replication.factor": "3"},
        broker_overrides={2: {"broker.rack": "rack-b"}},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def controller(cluster: ClusterForTests) -> FakeController:
    """The test's controller; like a real one, it first tells every broker who is alive."""
    controller = FakeController(controller_id=FAKE_CONTROLLER_ID, epoch=1)
    announce(cluster, controller, [])
    return controller


def test_each_broker_registers_kafkas_json_with_its_rack(cluster: ClusterForTests) -> None:
    assert cluster.registered_ids() == [1, 2]
    one = json.loads(cluster.zk.get("/brokers/ids/1")[0])
    two = json.loads(cluster.zk.get("/brokers/ids/2")[0])
    assert one["endpoints"] == [f"PLAINTEXT://127.0.0.1:{cluster.broker(1).port}"]
    assert one["version"] == 5 and "rack" not in one
    assert two["rack"] == "rack-b"


def test_a_second_broker_with_a_taken_id_exits_with_one_clear_line(cluster: ClusterForTests, tmp_path: Path) -> None:
    twin = BrokerProcess(tmp_path / "twin", overrides={"zookeeper.connect": cluster.connect, "broker.id": "1"})
    with pytest.raises(RuntimeError):
        twin.start(timeout=60)
    assert twin.exit_code == 1
    assert twin.log_tail().splitlines()[-1] == "spate: broker id 1 is already registered by a live broker"
    assert cluster.broker(1).exit_code is None


def test_cluster_mode_requires_a_broker_id(cluster: ClusterForTests, tmp_path: Path) -> None:
    anonymous = BrokerProcess(tmp_path / "anonymous", overrides={"zookeeper.connect": cluster.connect})
    with pytest.raises(RuntimeError):
        anonymous.start(timeout=60)
    last = anonymous.log_tail().splitlines()[-1]
    assert last.startswith("spate: broker.id: is required when zookeeper.connect is set")


def test_metadata_and_describe_cluster_come_from_the_controllers_updates(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    announce(cluster, controller, [PartitionSpec(topic, p, p + 1, replicas=(p + 1,)) for p in (0, 1)])
    for broker_id in (1, 2):
        answer = cluster.metadata(broker_id, [topic])
        assert answer.controller_id == FAKE_CONTROLLER_ID
        assert [(b.node_id, b.rack) for b in answer.brokers] == [(1, None), (2, "rack-b")]
        assert [(p.partition_index, p.leader_id) for p in answer.topics[0].partitions] == [(0, 1), (1, 2)]
        described = describe_cluster(cluster.address(broker_id))
        assert described.controller_id == FAKE_CONTROLLER_ID
        assert described.cluster_id == answer.cluster_id
        assert [b.broker_id for b in described.brokers] == [1, 2]


def test_requests_for_partitions_led_elsewhere_are_rerouted(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    announce(cluster, controller, [PartitionSpec(topic, 0, 1, replicas=(1,))])
    assert produce_one(cluster.address(1), topic).error_code == E.NONE
    assert produce_one(cluster.address(2), topic).error_code == E.NOT_LEADER_OR_FOLLOWER
    assert produce_one(cluster.address(2), topic, partition=5).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert produce_one(cluster.address(2), "never-created").error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_an_older_controller_epoch_is_refused(cluster: ClusterForTests, controller: FakeController, topic_name) -> None:
    topic = topic_name()
    stale = controller.leader_and_isr([PartitionSpec(topic, 0, 1, replicas=(1,))], epoch=controller.epoch - 1)
    response = send_leader_and_isr(cluster.address(1), stale)
    assert response.error_code == E.STALE_CONTROLLER_EPOCH
    assert [p.error_code for t in response.topics for p in t.partition_errors] == [E.STALE_CONTROLLER_EPOCH]
    body = controller.update_metadata(live_brokers(cluster), epoch=controller.epoch - 1)
    assert send_update_metadata(cluster.address(1), body).error_code == E.STALE_CONTROLLER_EPOCH
    body = controller.stop_replica([(topic, 0, -2, True)], epoch=controller.epoch - 1)
    assert send_stop_replica(cluster.address(1), body).error_code == E.STALE_CONTROLLER_EPOCH


def test_a_stale_broker_epoch_is_refused(cluster: ClusterForTests, controller: FakeController, topic_name) -> None:
    epoch = cluster.zk.exists("/brokers/ids/1").czxid
    body = controller.leader_and_isr([PartitionSpec(topic_name(), 0, 1, replicas=(1,))], broker_epoch=epoch - 1)
    assert send_leader_and_isr(cluster.address(1), body).error_code == E.STALE_BROKER_EPOCH


def test_stop_replica_with_delete_removes_the_log(cluster: ClusterForTests, controller: FakeController,
                                                  topic_name) -> None:
    topic = topic_name()
    announce(cluster, controller, [PartitionSpec(topic, 0, 1, replicas=(1,))])
    produce_one(cluster.address(1), topic)
    log_dir = cluster.broker(1).log_dir / f"{topic}-0"
    assert log_dir.is_dir()
    response = send_stop_replica(cluster.address(1), controller.stop_replica([(topic, 0, -2, True)]))
    assert response.error_code == E.NONE
    assert [(p.topic_name, p.partition_index, p.error_code) for p in response.partition_errors] == [(topic, 0, E.NONE)]
    assert not log_dir.exists()
    assert produce_one(cluster.address(1), topic).error_code == E.NOT_LEADER_OR_FOLLOWER


def test_find_coordinator_creates_the_offsets_topic_and_answers_its_leader(
    cluster: ClusterForTests, controller: FakeController
) -> None:
    first = find_group_coordinator(cluster.address(2), "group-a")
    assert first.error_code == E.COORDINATOR_NOT_AVAILABLE
    assignment = cluster.wait_for(lambda: cluster.zk.exists("/brokers/topics/__consumer_offsets"),
                                  "__consumer_offsets to be written")
    assert assignment is not None
    written = json.loads(cluster.zk.get("/brokers/topics/__consumer_offsets")[0])["partitions"]
    # offsets.topic.replication.factor is 3, but only two brokers are alive.
    assert all(sorted(replicas) == [1, 2] for replicas in written.values())
    assert "creating __consumer_offsets with replication factor 2, not 3" in cluster.broker(2).log_tail(200)
    specs = [PartitionSpec("__consumer_offsets", int(p), replicas[0], replicas=tuple(replicas))
             for p, replicas in written.items()]
    announce(cluster, controller, specs)
    leaders = {spec.partition: spec.leader for spec in specs}

    def answered():
        found = find_group_coordinator(cluster.address(2), "group-a")
        return found if found.error_code == E.NONE else None

    found = cluster.wait_for(answered, "the group coordinator to be found")
    assert found.node_id in leaders.values()
    assert found.port == cluster.broker(found.node_id).port


def test_controlled_shutdown_is_answered_only_by_the_controller(cluster: ClusterForTests) -> None:
    epoch = cluster.zk.exists("/brokers/ids/2").czxid
    assert controlled_shutdown(cluster.address(1), 2, epoch).error_code == E.NOT_CONTROLLER


def test_malformed_znodes_leave_the_broker_serving(cluster: ClusterForTests, controller: FakeController,
                                                   topic_name) -> None:
    topic = topic_name()
    announce(cluster, controller, [PartitionSpec(topic, 0, 1, replicas=(1,))])
    cluster.zk.create("/brokers/topics/junk", b"{garbage")
    cluster.zk.ensure_path("/brokers/topics/junk/partitions/0")
    cluster.zk.create("/brokers/topics/junk/partitions/0/state", b"[1,2")
    cluster.zk.create("/config/topics/junk", b"nope")
    assert create_partitions(cluster.address(1), "junk", 3).error_code == E.UNKNOWN_SERVER_ERROR
    assert describe_topic_configs(cluster.address(1), "junk").error_code == E.UNKNOWN_SERVER_ERROR
    assert produce_one(cluster.address(1), topic).error_code == E.NONE
    assert "/brokers/topics/junk" in cluster.broker(1).log_tail(80)
    cluster.broker(1).check_alive()


class ControllerStandIn:
    """A TCP server answering ControlledShutdown like a controller: remaining partitions first, then none."""

    def __init__(self, remaining_rounds: int) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.requests: list = []
        self._remaining_rounds = remaining_rounds
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        from spate.protocol.connection import ServerConnection, encode_response
        from spate.protocol.messages.controlled_shutdown import ControlledShutdownResponse as R

        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                codec = ServerConnection(max_request_size=1 << 20)
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    codec.receive_data(data)
                    request = codec.next_request()
                    if request is None:
                        continue
                    self.requests.append((request.api_key, request.api_version, request.body))
                    remaining = []
                    if len(self.requests) <= self._remaining_rounds:
                        remaining = [R.RemainingPartition(topic_name="t", partition_index=0)]
                    body = R(error_code=0, remaining_partitions=remaining)
                    conn.sendall(encode_response(request.header.correlation_id, request.api_key,
                                                 request.api_version, body))

    def close(self) -> None:
        self.server.close()


def test_sigterm_asks_the_controller_until_no_partition_remains(
    cluster: ClusterForTests, controller: FakeController, tmp_path: Path
) -> None:
    stand_in = ControllerStandIn(remaining_rounds=1)
    leaving = BrokerProcess(tmp_path / "leaving", overrides={
        "zookeeper.connect": cluster.connect, "broker.id": "7", "controlled.shutdown.retry.backoff.ms": "100",
    })
    try:
        leaving.start(timeout=60)
        brokers = live_brokers(cluster) + [Broker(7, "127.0.0.1", leaving.port),
                                           Broker(FAKE_CONTROLLER_ID, "127.0.0.1", stand_in.port)]
        assert send_update_metadata(leaving.bootstrap, controller.update_metadata(brokers)).error_code == E.NONE
        epoch = cluster.zk.exists("/brokers/ids/7").czxid
        assert leaving.stop(timeout=60) == 0
    finally:
        leaving.kill()
        stand_in.close()
    assert [(key, version) for key, version, _ in stand_in.requests] == [(ApiKey.CONTROLLED_SHUTDOWN, 3)] * 2
    assert {(body.broker_id, body.broker_epoch) for _, _, body in stand_in.requests} == {(7, epoch)}
    assert not cluster.registered(7)


def test_controller_requests_are_refused_by_an_embedded_broker(tmp_path: Path) -> None:
    embedded = BrokerProcess(tmp_path / "embedded").start()
    try:
        with pytest.raises(ConnectionError):
            call(embedded.bootstrap, ApiKey.UPDATE_METADATA, 7, FakeController().update_metadata([]))
    finally:
        embedded.stop()
