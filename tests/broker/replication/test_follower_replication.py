"""Followers on real broker processes, with the test playing the controller.

Three brokers share a ZooKeeper chroot whose ``/controller`` the test holds.
The test tells them who leads and who follows (LeaderAndIsr, UpdateMetadata,
StopReplica) and checks the followers' logs on disk: after replication a
follower's log holds the leader's batches byte for byte, and after a leader
change it first cuts what the new leader does not have. The leaders name
only themselves in the ISR, so their high watermark follows their log end
whatever the followers do.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.delete_records import DeleteRecordsRequest
from tests.support.admin_requests import produce_one
from tests.support.cluster import FAKE_CONTROLLER_ID, ClusterForTests, running_cluster
from tests.support.controller_requests import (
    FakeController,
    PartitionSpec,
    call,
    send_stop_replica,
)
from tests.support.played_controller import leader_and_isr, update_metadata

E = ErrorCode
REPLICATED_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper) -> Iterator[ClusterForTests]:
    with running_cluster(
        tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3, claim_controller=True,
        overrides={"replica.fetch.backoff.ms": "200", "replica.fetch.wait.max.ms": "200",
                   "offsets.topic.replication.factor": "1", "controlled.shutdown.enable": "false",
                   # Epochs of appended batches reach the checkpoint file with the log's next flush.
                   "log.flush.offset.checkpoint.interval.ms": "500"},
    ) as running:
        yield running


@pytest.fixture(scope="module")
def controller(cluster: ClusterForTests) -> FakeController:
    controller = FakeController(controller_id=FAKE_CONTROLLER_ID, epoch=1)
    update_metadata(cluster, controller, [])
    return controller


def spec(topic: str, leader: int, epoch: int, replicas: tuple[int, ...]) -> PartitionSpec:
    # The leader alone in the ISR: its high watermark is its log end (followers' positions do not count here).
    return PartitionSpec(topic, 0, leader, leader_epoch=epoch, replicas=replicas, isr=(leader,))


def delete_records(address: str, topic: str, before: int) -> int:
    Q = DeleteRecordsRequest
    body = Q(topics=[Q.DeleteRecordsTopic(name=topic, partitions=[Q.DeleteRecordsPartition(partition_index=0,
                                                                                            offset=before)])],
             timeout_ms=5000)
    answer = call(address, ApiKey.DELETE_RECORDS, 1, body).topics[0].partitions[0]
    assert answer.error_code == E.NONE
    return answer.low_watermark


def produce(cluster: ClusterForTests, broker_id: int, topic: str, values: list[bytes]) -> list[int]:
    offsets = []
    for value in values:
        answer = produce_one(cluster.address(broker_id), topic, value=value)
        assert answer.error_code == E.NONE
        offsets.append(answer.base_offset)
    return offsets


# --- reading logs on disk ----------------------------------------------------------------------


def partition_dir(cluster: ClusterForTests, broker_id: int, topic: str) -> Path:
    return cluster.broker(broker_id).log_dir / f"{topic}-0"


def log_bytes(cluster: ClusterForTests, broker_id: int, topic: str) -> bytes:
    """The partition's segments, in offset order, as one byte string."""
    directory = partition_dir(cluster, broker_id, topic)
    if not directory.exists():
        return b""
    return b"".join(path.read_bytes() for path in sorted(directory.glob("*.log")))


def batches(data: bytes) -> list[tuple[int, bytes]]:
    """(base offset, bytes) of each whole batch in segment bytes: 8-byte base offset, 4-byte length, the rest."""
    found, pos = [], 0
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos + 8:pos + 12], "big")
        end = pos + 12 + length
        if end > len(data):
            break
        found.append((int.from_bytes(data[pos:pos + 8], "big"), data[pos:end]))
        pos = end
    return found


def epoch_checkpoint(cluster: ClusterForTests, broker_id: int, topic: str) -> str:
    path = partition_dir(cluster, broker_id, topic) / "leader-epoch-checkpoint"
    return path.read_text() if path.exists() else ""


def wait_until_identical(cluster: ClusterForTests, topic: str, leader: int, followers: list[int]) -> bytes:
    expected: bytes = b""

    def identical() -> bool:
        nonlocal expected
        expected = log_bytes(cluster, leader, topic)
        return all(log_bytes(cluster, f, topic) == expected for f in followers)

    cluster.wait_for(identical, f"{followers} to hold broker {leader}'s log of {topic}", REPLICATED_TIMEOUT_S)
    return expected


# --- tests -----------------------------------------------------------------------------------------


def test_followers_hold_the_leaders_log_byte_for_byte(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=1, replicas=(1, 2, 3))
    # Broker 2 finds its leader in the LeaderAndIsr, broker 3 in its metadata cache.
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state], to=[1, 2])
    leader_and_isr(cluster, controller, [state], to=[3], live_leaders=False)
    assert produce_one(cluster.address(2), topic).error_code == E.NOT_LEADER_OR_FOLLOWER
    produce(cluster, 1, topic, [b"v%d" % i * (i + 1) for i in range(30)])
    data = wait_until_identical(cluster, topic, 1, [2, 3])
    assert [offset for offset, _ in batches(data)] == list(range(30))
    # The followers' epochs come from the leader's batches: the same checkpoint, once the logs flushed.
    cluster.wait_for(lambda: epoch_checkpoint(cluster, 1, topic) == "0\n1\n1 0\n", "broker 1's epoch checkpoint")
    cluster.wait_for(lambda: epoch_checkpoint(cluster, 2, topic) == "0\n1\n1 0\n", "broker 2's epoch checkpoint")
    # Later appends follow (the fetchers long-poll the leader).
    produce(cluster, 1, topic, [b"late"])
    wait_until_identical(cluster, topic, 1, [2, 3])


def test_a_new_follower_records_no_epoch_before_the_leaders_batches_arrive(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=4, replicas=(1, 2))
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state])
    time.sleep(0.5)
    assert epoch_checkpoint(cluster, 2, topic) in ("", "0\n0\n")
    produce(cluster, 1, topic, [b"a"])
    wait_until_identical(cluster, topic, 1, [2])
    cluster.wait_for(lambda: epoch_checkpoint(cluster, 2, topic) == "0\n1\n4 0\n", "broker 2's epoch checkpoint")


def test_a_follower_with_divergent_data_truncates_to_the_new_leader_and_matches_it(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    first = spec(topic, leader=1, epoch=1, replicas=(1, 2))
    update_metadata(cluster, controller, [first])
    leader_and_isr(cluster, controller, [first])
    produce(cluster, 1, topic, [b"common-%d" % i for i in range(5)])
    wait_until_identical(cluster, topic, 1, [2])
    # Broker 2 takes over at epoch 2 while broker 1, not told, still leads epoch 1: both write offsets 5...
    second = spec(topic, leader=2, epoch=2, replicas=(1, 2))
    leader_and_isr(cluster, controller, [second], to=[2])
    assert produce(cluster, 2, topic, [b"new-%d" % i for i in range(3)]) == [5, 6, 7]
    assert produce(cluster, 1, topic, [b"lost-%d" % i for i in range(4)]) == [5, 6, 7, 8]
    assert log_bytes(cluster, 1, topic) != log_bytes(cluster, 2, topic)
    # ...until broker 1 follows broker 2: it cuts its epoch-1 writes after offset 5 and fetches epoch 2's.
    third = spec(topic, leader=2, epoch=3, replicas=(1, 2))
    update_metadata(cluster, controller, [third])
    leader_and_isr(cluster, controller, [third])
    produce(cluster, 2, topic, [b"after"])
    data = wait_until_identical(cluster, topic, 2, [1])
    assert [offset for offset, _ in batches(data)] == list(range(9))
    assert b"lost-" not in data
    # The epoch checkpoint is written just after the batches that bring the epochs.
    expected = "0\n3\n1 0\n2 5\n3 8\n"
    cluster.wait_for(lambda: epoch_checkpoint(cluster, 1, topic) == expected, "broker 1's epochs to match the leader's")
    assert epoch_checkpoint(cluster, 2, topic) == expected


def test_a_follower_behind_the_leaders_log_start_starts_there(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=1, replicas=(1, 3))
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state], to=[1])
    produce(cluster, 1, topic, [b"r%d" % i for i in range(10)])
    assert delete_records(cluster.address(1), topic, 6) == 6
    # Broker 3 joins with an empty log: its fetch from 0 is out of range, so it starts at the leader's log start.
    leader_and_isr(cluster, controller, [state], to=[3])
    leader_batches = [b for b in batches(log_bytes(cluster, 1, topic)) if b[0] >= 6]

    def caught_up() -> bool:
        return batches(log_bytes(cluster, 3, topic)) == leader_batches

    cluster.wait_for(caught_up, "broker 3 to hold offsets 6-9", REPLICATED_TIMEOUT_S)
    assert sorted(p.name for p in partition_dir(cluster, 3, topic).glob("*.log")) == ["00000000000000000006.log"]


def test_stop_replica_stops_replicating(cluster: ClusterForTests, controller: FakeController, topic_name) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=1, replicas=(1, 2))
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state])
    produce(cluster, 1, topic, [b"before"])
    kept = wait_until_identical(cluster, topic, 1, [2])
    response = send_stop_replica(cluster.address(2), controller.stop_replica([(topic, 0, 1, False)]))
    assert response.error_code == E.NONE
    produce(cluster, 1, topic, [b"after"])
    time.sleep(1.5)
    assert log_bytes(cluster, 2, topic) == kept != log_bytes(cluster, 1, topic)


def test_a_follower_whose_leader_died_recovers_when_a_new_leader_is_named(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=1, replicas=(1, 2, 3))
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state])
    produce(cluster, 1, topic, [b"one-%d" % i for i in range(5)])
    wait_until_identical(cluster, topic, 1, [2, 3])
    cluster.kill(1)
    time.sleep(1.0)  # the followers' fetches fail and back off meanwhile
    assert cluster.broker(2).exit_code is None and cluster.broker(3).exit_code is None
    moved = spec(topic, leader=3, epoch=2, replicas=(1, 2, 3))
    leader_and_isr(cluster, controller, [moved], to=[2, 3])
    produce(cluster, 3, topic, [b"three-%d" % i for i in range(5)])
    data = wait_until_identical(cluster, topic, 3, [2])
    assert [offset for offset, _ in batches(data)] == list(range(10))
    # The old leader comes back as a follower of the new one and catches up.
    cluster.restart(1, clean=False)
    update_metadata(cluster, controller, [moved])
    leader_and_isr(cluster, controller, [moved], to=[1])
    wait_until_identical(cluster, topic, 3, [1, 2])


def test_a_follower_stops_cleanly_and_quickly_while_replicating(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    state = spec(topic, leader=1, epoch=1, replicas=(1, 2))
    update_metadata(cluster, controller, [state])
    leader_and_isr(cluster, controller, [state])
    produce(cluster, 1, topic, [b"x"])
    wait_until_identical(cluster, topic, 1, [2])
    started = time.monotonic()
    assert cluster.stop(2, timeout=30) == 0
    assert time.monotonic() - started < 20
    assert "stopped cleanly" in cluster.broker(2).log_tail(20)
    cluster.restart(2)
