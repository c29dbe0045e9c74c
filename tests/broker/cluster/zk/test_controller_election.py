"""Controller election: one winner per epoch, takeover when the winner's session ends, fencing by epoch."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest
from kazoo.exceptions import BadVersionError

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.controller_election import ControllerElection, Leadership
from broker_core.cluster.zk.znodes import ControllerEpochZNode, ControllerZNode
from tests.support.zookeeper import ZooKeeperForTests, expire_session, wait_until


class Contender:
    """One broker contending, with what its callbacks heard."""

    def __init__(self, session: ZkSession, broker_id: int) -> None:
        self.session = session
        self.events: list[object] = []
        self._lock = threading.Lock()
        self.election = ControllerElection(
            session, broker_id, on_elected=self._record, on_resigned=lambda: self._record("resigned")
        )

    def _record(self, event: object) -> None:
        with self._lock:
            self.events.append(event)

    def elections(self) -> list[Leadership]:
        with self._lock:
            return [event for event in self.events if isinstance(event, Leadership)]


@pytest.fixture
def contenders() -> Iterator[list[Contender]]:
    made: list[Contender] = []
    yield made
    for contender in made:
        contender.election.stop()


def contender(contenders: list[Contender], zookeeper: ZooKeeperForTests, chroot: str, broker_id: int) -> Contender:
    made = Contender(zookeeper.session(chroot), broker_id)
    contenders.append(made)
    return made


def test_of_two_contenders_one_wins(contenders, zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    a, b = contender(contenders, zookeeper, zk_chroot, 1), contender(contenders, zookeeper, zk_chroot, 2)
    a.election.start()
    b.election.start()
    winner = wait_until(lambda: next((c for c in (a, b) if c.elections()), None), "an election")
    loser = b if winner is a else a
    assert winner.elections() == [Leadership(winner.election.broker_id, 1, 1)]
    assert loser.elections() == []
    assert winner.election.is_controller() and not loser.election.is_controller()
    assert loser.election.active_controller() == winner.election.broker_id
    raw = zookeeper.session(zk_chroot)
    assert ControllerEpochZNode.decode(raw.get("/controller_epoch")[0]) == 1
    assert ControllerZNode.decode(raw.get("/controller")[0]).broker_id == winner.election.broker_id


def test_when_the_winners_session_closes_the_other_takes_over_with_a_new_epoch(
    contenders, zookeeper: ZooKeeperForTests, zk_chroot: str
) -> None:
    a = contender(contenders, zookeeper, zk_chroot, 1)
    a.election.start()
    wait_until(a.elections, "broker 1 to win")
    b = contender(contenders, zookeeper, zk_chroot, 2)
    b.election.start()
    wait_until(lambda: b.election.active_controller() == 1, "broker 2 to see broker 1 lead")
    a.session.close()
    wait_until(b.elections, "broker 2 to take over")
    assert b.elections() == [Leadership(2, 2, 2)]
    assert a.events[-1] == "resigned"
    assert b.election.is_controller()


def test_an_expired_controller_resigns_and_a_fresh_session_contends_again(
    contenders, zookeeper: ZooKeeperForTests, zk_chroot: str
) -> None:
    a = contender(contenders, zookeeper, zk_chroot, 1)
    a.election.start()
    wait_until(a.elections, "broker 1 to win")
    expire_session(zookeeper, a.session)
    wait_until(lambda: "resigned" in a.events, "broker 1 to resign")
    # Alone in the cluster, it wins again on its new session, one epoch on.
    wait_until(lambda: len(a.elections()) == 2, "broker 1 to win again")
    assert [leadership.epoch for leadership in a.elections()] == [1, 2]
    assert a.election.is_controller()


def test_stepping_down_deletes_the_controller_znode_and_hands_over(
    contenders, zookeeper: ZooKeeperForTests, zk_chroot: str
) -> None:
    a, b = contender(contenders, zookeeper, zk_chroot, 1), contender(contenders, zookeeper, zk_chroot, 2)
    a.election.start()
    wait_until(a.elections, "broker 1 to win")
    b.election.start()
    wait_until(lambda: b.election.active_controller() == 1, "broker 2 to see broker 1 lead")
    a.election.stop()
    assert a.events == [Leadership(1, 1, 1), "resigned"]
    wait_until(b.elections, "broker 2 to take over")
    assert b.elections()[0].epoch == 2


def test_a_deposed_controllers_fenced_writes_fail(contenders, zookeeper: ZooKeeperForTests, zk_chroot: str) -> None:
    a = contender(contenders, zookeeper, zk_chroot, 1)
    a.election.start()
    old = wait_until(a.elections, "broker 1 to win")[0]
    a.session.close()
    b = contender(contenders, zookeeper, zk_chroot, 2)
    b.election.start()
    new = wait_until(b.elections, "broker 2 to win")[0]
    raw = zookeeper.session(zk_chroot)
    raw.create("/work", b"")

    def fenced_write(leadership: Leadership) -> list[object]:
        transaction = raw.transaction()
        leadership.fence(transaction)
        transaction.set_data("/work", str(leadership.epoch).encode())
        return raw.commit(transaction)

    stale = fenced_write(old)
    assert isinstance(stale[0], BadVersionError)
    assert raw.get("/work")[0] == b""
    assert not any(isinstance(result, Exception) for result in fenced_write(new))
    assert raw.get("/work")[0] == b"2"
