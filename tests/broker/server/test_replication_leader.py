"""A real broker process leading partitions with followers; the test plays the controller and the follower.

The broker (id 1) leads partitions whose replicas are (1, 2). No broker 2
runs: the test fetches as broker 2 (Fetch with ``replica_id`` 2), writes the
partition state znodes the way the controller does, and sends LeaderAndIsr
and UpdateMetadata itself. ``replica.lag.time.max.ms`` is short, so a
follower that does not fetch leaves the ISR within seconds.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Callable, Iterator

import pytest

from broker_core.cluster.zk.znodes import (
    LeaderIsrAndControllerEpoch,
    TopicAssignment,
    TopicConfigZNode,
    TopicPartitionStateZNode,
    TopicZNode,
)
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from spate.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch, iter_batches
from tests.support.cluster import FAKE_CONTROLLER_ID, ClusterForTests, running_cluster
from tests.support.controller_requests import (
    Broker,
    FakeController,
    PartitionSpec,
    call,
    send_leader_and_isr,
    send_update_metadata,
)

E = ErrorCode
LEADER, FOLLOWER = 1, 2
LAG_MS = 5000
CONTROLLER_EPOCH = 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper) -> Iterator[ClusterForTests]:
    with running_cluster(
        tmp_path_factory.mktemp("cluster"), zookeeper, brokers=1, claim_controller=True,
        overrides={"replica.lag.time.max.ms": str(LAG_MS), "offsets.topic.num.partitions": "1"},
    ) as running:
        yield running


@pytest.fixture
def address(cluster: ClusterForTests) -> str:
    return cluster.address(LEADER)


class PlayedController:
    """The test as the controller: partition state znodes written as the controller writes them, then told."""

    def __init__(self, cluster: ClusterForTests) -> None:
        self.cluster = cluster
        self.controller = FakeController(controller_id=FAKE_CONTROLLER_ID, epoch=CONTROLLER_EPOCH)
        with socket.socket() as probe:  # broker 2 is alive for the leader, though nothing listens where it would
            probe.bind(("127.0.0.1", 0))
            follower_port = probe.getsockname()[1]
        self.brokers = [Broker(LEADER, "127.0.0.1", cluster.broker(LEADER).port),
                        Broker(FOLLOWER, "127.0.0.1", follower_port)]

    def elect(self, topic: str, *, leader: int = LEADER, leader_epoch: int = 0,
              isr: tuple[int, ...] = (LEADER, FOLLOWER), replicas: tuple[int, ...] = (LEADER, FOLLOWER),
              configs: dict[str, str] | None = None) -> None:
        """Write the partition state, then send LeaderAndIsr (to broker 1) and UpdateMetadata."""
        zk, controller = self.cluster.zk, self.controller
        if configs is not None and zk.exists(TopicConfigZNode.path(topic)) is None:
            zk.ensure_path("/config/topics")
            zk.create(TopicConfigZNode.path(topic), TopicConfigZNode.encode(configs))
        state = LeaderIsrAndControllerEpoch(leader, leader_epoch, isr, CONTROLLER_EPOCH)
        data = TopicPartitionStateZNode.encode(state)
        if zk.exists(state_path(topic)) is None:
            assignment = TopicAssignment(controller.topic_id(topic), {0: replicas})
            zk.create(TopicZNode.path(topic), TopicZNode.encode(assignment))
            zk.ensure_path(f"/brokers/topics/{topic}/partitions/0")
            zk.create(state_path(topic), data)
        else:
            zk.set(state_path(topic), data, version=-1)
        version = zk.exists(state_path(topic)).version
        spec = PartitionSpec(topic, 0, leader, leader_epoch=leader_epoch, replicas=replicas, isr=isr,
                             zk_version=version)
        address = self.cluster.address(LEADER)
        response = send_leader_and_isr(address, controller.leader_and_isr([spec]))
        assert response.error_code == E.NONE
        assert [p.error_code for t in response.topics for p in t.partition_errors] == [E.NONE]
        assert send_update_metadata(address, controller.update_metadata(self.brokers, [spec])).error_code == E.NONE


@pytest.fixture(scope="module")
def ctl(cluster: ClusterForTests) -> PlayedController:
    return PlayedController(cluster)


def state_path(topic: str) -> str:
    return TopicPartitionStateZNode.path(topic, 0)


def partition_state(cluster: ClusterForTests, topic: str) -> tuple[dict, int]:
    data, stat = cluster.zk.get(state_path(topic))
    return json.loads(data), stat.version


def isr_change_notified(cluster: ClusterForTests, topic: str) -> bool:
    """Whether an ``/isr_change_notification/isr_change_*`` (Kafka's JSON) names the topic's partition 0."""
    for name in cluster.zk.get_children("/isr_change_notification"):
        notification = json.loads(cluster.zk.get(f"/isr_change_notification/{name}")[0])
        assert notification["version"] == 1 and name.startswith("isr_change_")
        if {"topic": topic, "partition": 0} in notification["partitions"]:
            return True
    return False


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    return ClusterForTests.wait_for(predicate, what, timeout)


# --- requests ----------------------------------------------------------------------------------


def produce(address: str, topic: str, *, acks: int, timeout_ms: int = 10_000, count: int = 1) -> Any:
    Q = ProduceRequest
    batch = build_batch([Record(i, 1_700_000_000_000, None, b"v%d" % i) for i in range(count)])
    body = Q(acks=acks, timeout_ms=timeout_ms, topic_data=[
        Q.TopicProduceData(name=topic, partition_data=[Q.PartitionProduceData(index=0, records=batch)])
    ])
    return call(address, ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0]


def produce_in_background(address: str, topic: str, **kwargs: Any) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(produce(address, topic, acks=-1, **kwargs)), daemon=True)
    thread.start()
    return thread, answers


def fetch(address: str, topic: str, offset: int, *, replica_id: int = -1, epoch: int = -1, max_wait_ms: int = 0,
          log_start_offset: int = 0) -> Any:
    Q = FetchRequest
    body = Q(replica_id=replica_id, max_wait_ms=max_wait_ms, min_bytes=1, isolation_level=0, topics=[
        Q.FetchTopic(topic=topic, partitions=[Q.FetchPartition(
            partition=0, current_leader_epoch=epoch, fetch_offset=offset, log_start_offset=log_start_offset,
            partition_max_bytes=1 << 20)]),
    ], forgotten_topics_data=[])
    return call(address, ApiKey.FETCH, 11, body).responses[0].partitions[0]


def follow(address: str, topic: str, offset: int, **kwargs: Any) -> Any:
    return fetch(address, topic, offset, replica_id=FOLLOWER, **kwargs)


def offsets_of(records: Any) -> list[int]:
    return [offset for header in iter_batches(bytes(records or b""))
            for offset in range(header.base_offset, header.next_offset)]


def list_offset(address: str, topic: str, timestamp: int, *, epoch: int = -1, replica_id: int = -1) -> Any:
    Q = ListOffsetsRequest
    body = Q(replica_id=replica_id, isolation_level=0, topics=[Q.ListOffsetsTopic(name=topic, partitions=[
        Q.ListOffsetsPartition(partition_index=0, current_leader_epoch=epoch, timestamp=timestamp)])])
    return call(address, ApiKey.LIST_OFFSETS, 5, body).topics[0].partitions[0]


def epoch_end(address: str, topic: str, leader_epoch: int, *, epoch: int = -1) -> Any:
    Q = OffsetForLeaderEpochRequest
    body = Q(replica_id=FOLLOWER, topics=[Q.OffsetForLeaderTopic(topic=topic, partitions=[
        Q.OffsetForLeaderPartition(partition=0, current_leader_epoch=epoch, leader_epoch=leader_epoch)])])
    return call(address, ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, body).topics[0].partitions[0]


# --- acks=all and the high watermark ----------------------------------------------------------


def test_an_acks_all_produce_is_answered_once_the_follower_fetched_past_it(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic)
    thread, answers = produce_in_background(address, topic, count=2)
    time.sleep(0.5)
    assert thread.is_alive()
    fetched = follow(address, topic, 0)
    assert fetched.error_code == E.NONE and offsets_of(fetched.records) == [0, 1]
    assert fetched.high_watermark == 0
    assert offsets_of(fetch(address, topic, 0).records) == []  # consumers see only what both replicas hold
    time.sleep(0.3)
    assert thread.is_alive()
    assert follow(address, topic, 2).high_watermark == 2
    thread.join(10)
    assert not thread.is_alive()
    assert (answers[0].error_code, answers[0].base_offset) == (E.NONE, 0)
    assert offsets_of(fetch(address, topic, 0).records) == [0, 1]


def test_without_the_follower_an_acks_all_produce_times_out_and_acks_1_does_not_wait(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic)
    started = time.monotonic()
    answer = produce(address, topic, acks=-1, timeout_ms=400)
    assert (answer.error_code, answer.base_offset) == (E.REQUEST_TIMED_OUT, 0)
    assert 0.3 < time.monotonic() - started < LAG_MS / 1000
    assert produce(address, topic, acks=1).error_code == E.NONE
    assert fetch(address, topic, 0).high_watermark == 0


def test_a_consumer_waiting_for_data_is_woken_when_the_high_watermark_moves(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic)
    answers: list[Any] = []
    consumer = threading.Thread(target=lambda: answers.append(fetch(address, topic, 0, max_wait_ms=8000)),
                                daemon=True)
    consumer.start()
    time.sleep(0.3)
    assert produce(address, topic, acks=1).error_code == E.NONE
    time.sleep(0.3)
    assert consumer.is_alive()  # the record is not committed yet
    follow(address, topic, 1)
    consumer.join(5)
    assert not consumer.is_alive() and offsets_of(answers[0].records) == [0]


def test_a_follower_reads_past_the_high_watermark_and_learns_the_log_end_offset(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic)
    assert produce(address, topic, acks=1, count=3).error_code == E.NONE
    assert list_offset(address, topic, -1).offset == 0
    assert list_offset(address, topic, -1, replica_id=FOLLOWER).offset == 3
    assert offsets_of(follow(address, topic, 1).records) == [0, 1, 2]  # whole batches from offset 1 on


# --- the ISR -----------------------------------------------------------------------------------


def test_a_lagging_follower_leaves_the_isr_in_zookeeper_and_min_insync_refuses_acks_all(ctl, address,
                                                                                       topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic, configs={"min.insync.replicas": "2"})
    thread, answers = produce_in_background(address, topic, timeout_ms=4 * LAG_MS)
    state = wait_for(lambda: (s := partition_state(ctl.cluster, topic))[0]["isr"] == [LEADER] and s,
                     "the ISR to shrink in ZooKeeper", timeout=5 * LAG_MS / 1000)
    assert state == ({"controller_epoch": CONTROLLER_EPOCH, "leader": LEADER, "version": 1, "leader_epoch": 0,
                      "isr": [LEADER]}, 1)
    assert isr_change_notified(ctl.cluster, topic)
    thread.join(10)
    assert answers[0].error_code == E.NOT_ENOUGH_REPLICAS_AFTER_APPEND  # appended, then the ISR shrank
    assert produce(address, topic, acks=-1).error_code == E.NOT_ENOUGH_REPLICAS
    assert produce(address, topic, acks=1).error_code == E.NONE
    assert fetch(address, topic, 0).high_watermark == 2


def test_a_follower_that_caught_up_rejoins_the_isr(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic, isr=(LEADER,))
    assert produce(address, topic, acks=-1, count=2).error_code == E.NONE  # the ISR is the leader alone
    follow(address, topic, 0)
    assert partition_state(ctl.cluster, topic)[0]["isr"] == [LEADER]
    follow(address, topic, 2)
    wait_for(lambda: partition_state(ctl.cluster, topic)[0]["isr"] == [LEADER, FOLLOWER], "the ISR to grow")
    assert partition_state(ctl.cluster, topic)[1] == 1
    wait_for(lambda: isr_change_notified(ctl.cluster, topic), "the ISR change notification")
    thread, answers = produce_in_background(address, topic)
    time.sleep(0.3)
    assert thread.is_alive()  # the follower is in the ISR again: acks=all waits for it
    follow(address, topic, 3)
    thread.join(10)
    assert answers[0].error_code == E.NONE


def test_a_leader_whose_isr_write_meets_a_newer_epoch_stops_leading_until_told(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic)
    thread, answers = produce_in_background(address, topic, timeout_ms=4 * LAG_MS)
    # The controller elected broker 2 without telling broker 1 (yet).
    moved = LeaderIsrAndControllerEpoch(FOLLOWER, 1, (FOLLOWER,), CONTROLLER_EPOCH)
    ctl.cluster.zk.set(state_path(topic), TopicPartitionStateZNode.encode(moved), version=0)
    thread.join(5 * LAG_MS / 1000)
    assert answers[0].error_code == E.NOT_LEADER_OR_FOLLOWER
    assert produce(address, topic, acks=1).error_code == E.NOT_LEADER_OR_FOLLOWER
    assert fetch(address, topic, 0).error_code == E.NOT_LEADER_OR_FOLLOWER
    assert partition_state(ctl.cluster, topic) == (json.loads(TopicPartitionStateZNode.encode(moved)), 1)
    ctl.elect(topic, leader_epoch=2, isr=(LEADER,))
    assert produce(address, topic, acks=-1).error_code == E.NONE


# --- leader epochs (KIP-320) ----------------------------------------------------------------------


def test_requests_naming_another_leader_epoch_are_fenced(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic, leader_epoch=5, isr=(LEADER,))
    assert produce(address, topic, acks=1).error_code == E.NONE
    for epoch, code in ((4, E.FENCED_LEADER_EPOCH), (6, E.UNKNOWN_LEADER_EPOCH), (5, E.NONE), (-1, E.NONE)):
        assert fetch(address, topic, 0, epoch=epoch).error_code == code
        assert follow(address, topic, 0, epoch=epoch).error_code == code
        assert list_offset(address, topic, -1, epoch=epoch).error_code == code
        assert epoch_end(address, topic, 5, epoch=epoch).error_code == code
    answer = epoch_end(address, topic, 5, epoch=5)
    assert (answer.leader_epoch, answer.end_offset) == (5, 1)


def test_a_follower_replica_checks_the_epoch_before_saying_it_does_not_lead(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic, leader=FOLLOWER, leader_epoch=3)
    for epoch, code in ((2, E.FENCED_LEADER_EPOCH), (3, E.NOT_LEADER_OR_FOLLOWER), (4, E.UNKNOWN_LEADER_EPOCH),
                        (-1, E.NOT_LEADER_OR_FOLLOWER)):
        assert fetch(address, topic, 0, epoch=epoch).error_code == code
        assert list_offset(address, topic, -1, epoch=epoch).error_code == code
        assert epoch_end(address, topic, 3, epoch=epoch).error_code == code
    assert produce(address, topic, acks=1).error_code == E.NOT_LEADER_OR_FOLLOWER


def test_a_fetch_from_a_broker_that_is_not_a_replica_is_refused(ctl, address, topic_name) -> None:
    topic = topic_name()
    ctl.elect(topic, isr=(LEADER,))
    assert fetch(address, topic, 0, replica_id=3, epoch=0).error_code == E.UNKNOWN_LEADER_EPOCH
    assert fetch(address, topic, 0, replica_id=3).error_code == E.NOT_LEADER_OR_FOLLOWER


def test_a_leader_re_elected_before_its_followers_caught_up_holds_back_the_latest_offset(
    ctl, address, topic_name
) -> None:
    topic = topic_name()
    ctl.elect(topic)
    assert produce(address, topic, acks=1, count=3).error_code == E.NONE
    ctl.elect(topic, leader_epoch=1)  # epoch 1 begins at 3; the high watermark is 0
    assert list_offset(address, topic, -1).error_code == E.OFFSET_NOT_AVAILABLE
    assert list_offset(address, topic, -2).offset == 0
    follow(address, topic, 3)
    answer = list_offset(address, topic, -1)
    assert (answer.error_code, answer.offset, answer.leader_epoch) == (E.NONE, 3, 1)
