"""A partition leader's ISR writes and change notifications, against a real ZooKeeper."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from kazoo.exceptions import ConnectionLoss

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.partition_state_zk import NO_VERSION, IsrUpdate, PartitionStateZk
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch, TopicPartitionStateZNode
from spate.structs import TopicPartition
from tests.support.zookeeper import ZooKeeperForTests

T0 = TopicPartition("orders", 0)
STATE = "/brokers/topics/orders/partitions/0/state"


@pytest.fixture
def session(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[ZkSession]:
    yield zookeeper.session(zk_chroot)


def write_state(session: ZkSession, leader: int, leader_epoch: int, isr: list[int], controller_epoch: int = 3) -> None:
    session.ensure_path("/brokers/topics/orders/partitions/0")
    data = TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(leader, leader_epoch, tuple(isr),
                                                                       controller_epoch))
    if session.exists(STATE) is None:
        session.create(STATE, data)
    else:
        session.set(STATE, data, version=-1)


def test_the_new_isr_is_written_when_the_version_is_the_one_known(session: ZkSession) -> None:
    write_state(session, 1, 4, [1, 2, 3])
    outcome = PartitionStateZk(session).update_isr(T0, LeaderIsrAndControllerEpoch(1, 4, (1, 2), 3), 0)
    assert outcome == IsrUpdate(True, 1)
    data, stat = session.get(STATE)
    assert json.loads(data) == {"controller_epoch": 3, "leader": 1, "version": 1, "leader_epoch": 4, "isr": [1, 2]}
    assert stat.version == 1


def test_a_state_written_meanwhile_is_returned_instead(session: ZkSession) -> None:
    write_state(session, 1, 4, [1, 2, 3])
    write_state(session, 2, 5, [2, 3], controller_epoch=4)
    outcome = PartitionStateZk(session).update_isr(T0, LeaderIsrAndControllerEpoch(1, 4, (1, 2), 3), 0)
    assert outcome == IsrUpdate(False, 1, LeaderIsrAndControllerEpoch(2, 5, (2, 3), 4))
    assert json.loads(session.get(STATE)[0])["leader"] == 2


def test_a_missing_state_is_not_created(session: ZkSession) -> None:
    outcome = PartitionStateZk(session).update_isr(T0, LeaderIsrAndControllerEpoch(1, 4, (1,), 3), 0)
    assert outcome == IsrUpdate(False, NO_VERSION)
    assert session.exists(STATE) is None


class LosingFirstAnswer:
    """A session whose first conditional write lands but whose answer is lost."""

    def __init__(self, session: ZkSession) -> None:
        self._session = session
        self.lost = False

    def set(self, path: str, value: bytes, *, version: int) -> Any:
        stat = self._session.set(path, value, version=version)
        if not self.lost:
            self.lost = True
            raise ConnectionLoss()
        return stat

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def test_a_write_whose_answer_was_lost_is_recognised_on_the_retry(session: ZkSession) -> None:
    write_state(session, 1, 4, [1, 2, 3])
    flaky = LosingFirstAnswer(session)
    outcome = PartitionStateZk(flaky).update_isr(T0, LeaderIsrAndControllerEpoch(1, 4, (1, 3), 3), 0)
    assert flaky.lost and outcome == IsrUpdate(True, 1)


def test_a_notification_names_the_partitions_in_kafkas_json(session: ZkSession) -> None:
    zk = PartitionStateZk(session)
    first = zk.notify_isr_change([TopicPartition("b", 1), TopicPartition("a", 0)])  # the parent does not exist yet
    second = zk.notify_isr_change([T0])
    assert first.startswith("/isr_change_notification/isr_change_") and first < second
    names = sorted(session.get_children("/isr_change_notification"))
    assert [f"/isr_change_notification/{n}" for n in names] == [first, second]
    assert json.loads(session.get(first)[0]) == {
        "version": 1, "partitions": [{"topic": "a", "partition": 0}, {"topic": "b", "partition": 1}],
    }
