"""The controller's partition-state writes, against a real ZooKeeper.

States go to ZooKeeper in fenced transactions of at most
``STATES_PER_TRANSACTION`` partitions, so that a topic of thousands of
partitions never sends one request past ZooKeeper's 1 MB limit; a stale
partition costs only itself, and a controller that lost its epoch writes
nothing more.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.controller_zk import (
    NO_STATE_VERSION,
    STATES_PER_TRANSACTION,
    ControllerMovedError,
    ControllerZk,
    StaleStateError,
)
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch, TopicPartitionStateZNode
from spate.structs import TopicPartition
from tests.support.zookeeper import ZooKeeperForTests

TOPIC = "orders"
EPOCH = 1


@pytest.fixture
def session(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[ZkSession]:
    session = zookeeper.session(zk_chroot)
    ControllerZk(session).ensure_paths()
    session.create("/controller_epoch", str(EPOCH).encode())
    session.ensure_path(f"/brokers/topics/{TOPIC}")
    yield session


@pytest.fixture
def transactions(session: ZkSession) -> list[int]:
    """How many ZooKeeper transactions the session committed, and with how many operations each."""
    sizes: list[int] = []
    commit = session.commit

    def counting(transaction: Any) -> list[Any]:
        sizes.append(len(transaction.operations))
        return commit(transaction)

    session.commit = counting  # type: ignore[method-assign]
    return sizes


LEADERSHIP = Leadership(broker_id=1, epoch=EPOCH, epoch_zk_version=0)


def state(leader: int, leader_epoch: int = 0) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(leader, leader_epoch, (leader,), EPOCH)


def stored(session: ZkSession, partition: int) -> tuple[dict, int]:
    data, stat = session.get(TopicPartitionStateZNode.path(TOPIC, partition))
    return json.loads(data), stat.version


def test_thousands_of_new_states_are_written_in_bounded_transactions(session, transactions) -> None:
    count = 2 * STATES_PER_TRANSACTION + 50
    new = {TopicPartition(TOPIC, p): (state(1), NO_STATE_VERSION) for p in range(count)}

    versions, failures = ControllerZk(session).write_partition_states(new, LEADERSHIP)

    assert failures == {}
    assert versions == {tp: 0 for tp in new}
    assert len(transactions) == 3
    # Each creation needs its partition's two parent znodes, plus the epoch check that fences the transaction.
    assert max(transactions) <= 3 * STATES_PER_TRANSACTION + 1
    assert stored(session, count - 1) == ({"controller_epoch": EPOCH, "leader": 1, "version": 1, "leader_epoch": 0,
                                           "isr": [1]}, 0)


def test_a_stale_partition_fails_alone_and_the_rest_of_its_transaction_is_written(session) -> None:
    zk = ControllerZk(session)
    partitions = [TopicPartition(TOPIC, p) for p in range(5)]
    zk.write_partition_states({tp: (state(1), NO_STATE_VERSION) for tp in partitions}, LEADERSHIP)
    session.set(TopicPartitionStateZNode.path(TOPIC, 2), TopicPartitionStateZNode.encode(state(3, 7)), version=0)

    versions, failures = zk.write_partition_states({tp: (state(2, 1), 0) for tp in partitions}, LEADERSHIP)

    assert set(failures) == {partitions[2]}
    assert isinstance(failures[partitions[2]], StaleStateError)
    assert versions == {tp: 1 for tp in partitions if tp.partition != 2}
    assert stored(session, 2)[0]["leader"] == 3  # the newer state is left as it was
    assert all(stored(session, p)[0]["leader"] == 2 for p in (0, 1, 3, 4))


def test_a_controller_whose_epoch_moved_on_writes_nothing_and_is_told_so(session) -> None:
    session.set("/controller_epoch", str(EPOCH + 1).encode(), version=0)
    new = {TopicPartition(TOPIC, p): (state(1), NO_STATE_VERSION) for p in range(STATES_PER_TRANSACTION + 1)}

    versions, failures = ControllerZk(session).write_partition_states(new, LEADERSHIP)

    assert versions == {}
    assert set(failures) == set(new)
    assert all(isinstance(error, ControllerMovedError) for error in failures.values())
    assert session.get_children(f"/brokers/topics/{TOPIC}") == []
