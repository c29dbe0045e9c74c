"""The leader's ISR upkeep against a stand-in for ZooKeeper: shrink after the lag, expand when caught up,
conditional writes, notifications, and a leader deposed by a newer epoch."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Iterable

import pytest

from broker_core.cluster.zk.errors import ZooKeeperUnavailableError
from broker_core.cluster.zk.partition_state_zk import NO_VERSION, IsrUpdate
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch
from broker_core.server.isr_manager import IsrManager
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition
from tests.broker.server.replication_harness import ME, LeaderHarness, records

LAG_MS = 10_000
T0 = TopicPartition("t", 0)


class FakeStates:
    """Partition state znodes in memory: conditional writes on a version, and the notifications made."""

    def __init__(self) -> None:
        self.states: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        self.notifications: list[list[TopicPartition]] = []
        self.writes: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch, int]] = []
        self.fail_with: Exception | None = None
        self.threads: set[str] = set()

    def update_isr(self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch, expected_version: int) -> IsrUpdate:
        self.threads.add(threading.current_thread().name)
        self.writes.append((tp, state, expected_version))
        if self.fail_with is not None:
            raise self.fail_with
        if tp not in self.states:
            return IsrUpdate(False, NO_VERSION)
        current, version = self.states[tp]
        if version != expected_version:
            return IsrUpdate(False, version, current)
        self.states[tp] = (state, version + 1)
        return IsrUpdate(True, version + 1)

    def notify_isr_change(self, partitions: Iterable[TopicPartition]) -> str:
        self.notifications.append(sorted(partitions))
        return f"/isr_change_notification/isr_change_{len(self.notifications):010d}"


class Setup:
    def __init__(self, data_dir: Path, **settings: str) -> None:
        self.h = LeaderHarness(data_dir, **settings)
        self.zk = FakeStates()
        self.isr = IsrManager(replicas=self.h.replicas, writer=self.zk, clock=self.h.clock, max_lag_ms=LAG_MS)

    def lead(self, topic: str = "t", *, isr: tuple[int, ...] = (ME, 2), replicas: tuple[int, ...] = (ME, 2),
             leader_epoch: int = 0, version: int = 0):
        tp = TopicPartition(topic, 0)
        self.zk.states[tp] = (LeaderIsrAndControllerEpoch(ME, leader_epoch, isr, 1), version)
        return self.h.lead(topic, isr=isr, replicas=replicas, leader_epoch=leader_epoch, partition_epoch=version)

    def shrink(self) -> None:
        async def run() -> None:
            self.isr.maybe_shrink_isrs()
            await self.isr.settled()

        asyncio.run(run())

    def expand(self, partition, follower: int) -> None:
        async def run() -> None:
            self.isr.maybe_expand_isr(partition, follower)
            await self.isr.settled()

        asyncio.run(run())


@pytest.fixture
def s(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def test_a_follower_behind_for_the_lag_leaves_the_isr_in_the_partition_state(s: Setup) -> None:
    partition = s.lead(version=4)
    partition.append_records(records(3))
    s.h.clock.now += LAG_MS
    s.shrink()
    assert s.zk.writes == []
    s.h.clock.now += 1
    s.shrink()
    assert s.zk.states[T0] == (LeaderIsrAndControllerEpoch(ME, 0, (ME,), 1), 5)
    assert s.zk.writes[0][2] == 4  # conditional on the version the leader knew
    assert s.zk.notifications == [[T0]]
    assert partition.isr == (ME,) and partition.partition_epoch == 5 and partition.pending_isr is None
    assert partition.high_watermark == 3
    assert s.zk.threads and threading.main_thread().name not in s.zk.threads


def test_one_check_writes_every_shrunk_isr_and_notifies_once(s: Setup) -> None:
    for topic in ("a", "b"):
        s.lead(topic).append_records(records(1))
    s.lead("c", isr=(ME,))
    s.h.clock.now += LAG_MS + 1
    s.shrink()
    assert [w[0].topic for w in s.zk.writes] == ["a", "b"]
    assert s.zk.notifications == [[TopicPartition("a", 0), TopicPartition("b", 0)]]


def test_a_follower_back_at_the_high_watermark_rejoins(s: Setup) -> None:
    partition = s.lead(isr=(ME,))
    partition.append_records(records(2))
    partition.update_follower_fetch(2, 1, s.h.clock())
    s.expand(partition, 2)
    assert s.zk.writes == []
    partition.update_follower_fetch(2, 2, s.h.clock())
    s.expand(partition, 2)
    assert partition.isr == (ME, 2) and s.zk.states[T0][0].isr == (ME, 2)
    assert s.zk.notifications == [[T0]]


def test_a_newer_leader_epoch_in_the_partition_state_deposes_the_leader(s: Setup) -> None:
    partition = s.lead(version=2)
    s.zk.states[T0] = (LeaderIsrAndControllerEpoch(2, 1, (2,), 2), 3)  # the controller elected broker 2
    s.h.clock.now += LAG_MS + 1
    s.shrink()
    assert not partition.is_leader and partition.isr == (ME, 2)
    assert s.zk.states[T0] == (LeaderIsrAndControllerEpoch(2, 1, (2,), 2), 3)
    assert s.zk.notifications == []
    with pytest.raises(KafkaError) as refused:
        partition.append_records(records(1))
    assert refused.value.code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    s.h.lead(isr=(ME,), leader_epoch=2, partition_epoch=4)  # LeaderAndIsr: leader again
    assert partition.is_leader
    partition.append_records(records(1))


def test_the_same_leader_re_elected_for_a_newer_epoch_is_deposed_until_told(s: Setup) -> None:
    partition = s.lead(version=2)
    s.zk.states[T0] = (LeaderIsrAndControllerEpoch(ME, 1, (ME,), 2), 3)
    s.h.clock.now += LAG_MS + 1
    s.shrink()
    assert not partition.is_leader


def test_a_state_changed_at_the_same_epoch_is_adopted_and_the_change_proposed_again(s: Setup) -> None:
    partition = s.lead(isr=(ME, 2, 3), replicas=(ME, 2, 3), version=2)
    s.zk.states[T0] = (LeaderIsrAndControllerEpoch(ME, 0, (ME, 2, 3), 1), 5)
    partition.update_follower_fetch(3, 0, s.h.clock())
    s.h.clock.now += LAG_MS + 1
    partition.update_follower_fetch(3, 0, s.h.clock())
    s.shrink()
    assert [w[2] for w in s.zk.writes] == [2, 5]
    assert s.zk.states[T0] == (LeaderIsrAndControllerEpoch(ME, 0, (ME, 3), 1), 6)
    assert partition.isr == (ME, 3) and partition.partition_epoch == 6
    assert s.zk.notifications == [[T0]]


def test_zookeeper_failing_drops_the_change_until_the_next_check(s: Setup) -> None:
    partition = s.lead()
    s.zk.fail_with = ZooKeeperUnavailableError("no answer")
    s.h.clock.now += LAG_MS + 1
    s.shrink()
    assert partition.isr == (ME, 2) and partition.pending_isr is None
    s.zk.fail_with = None
    s.shrink()
    assert partition.isr == (ME,)


def test_an_answer_arriving_after_a_new_leader_and_isr_is_ignored(s: Setup) -> None:
    partition = s.lead()
    s.h.clock.now += LAG_MS + 1

    async def run() -> None:
        s.isr.maybe_shrink_isrs()
        s.h.lead(isr=(ME, 2), leader_epoch=1, partition_epoch=7)  # arrives while the write is under way
        await s.isr.settled()

    asyncio.run(run())
    assert partition.isr == (ME, 2) and partition.partition_epoch == 7 and partition.pending_isr is None
    assert s.zk.notifications == []


def test_an_acks_all_produce_waiting_on_a_shrinking_isr_learns_of_it(tmp_path: Path) -> None:
    s = Setup(tmp_path, **{"min.insync.replicas": "2"})
    partition = s.lead()
    result = partition.append_records(records(1), required_acks=-1)
    s.h.clock.now += LAG_MS + 1
    seen: list[tuple[bool, ErrorCode]] = []
    s.h.purgatory.watch([("t", 0)], lambda: seen.append(partition.check_enough_replicas_reach_offset(
        result.last_offset + 1)) or True)
    s.shrink()
    assert seen == [(True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)]


def test_the_periodic_check_runs_every_half_lag(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    s.isr.max_lag_ms = 40
    partition = s.lead()
    s.h.clock.now += 41

    async def run() -> None:
        s.isr.start()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if partition.isr == (ME,):
                break
        await s.isr.close()

    asyncio.run(run())
    assert partition.isr == (ME,)


def test_a_broker_no_longer_registered_does_not_rejoin(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    alive = {ME}
    s.isr = IsrManager(replicas=s.h.replicas, writer=s.zk, clock=s.h.clock, max_lag_ms=LAG_MS,
                       broker_alive=lambda broker_id: broker_id in alive)
    partition = s.lead(isr=(ME,))
    partition.update_follower_fetch(2, 0, s.h.clock())
    s.expand(partition, 2)
    assert partition.isr == (ME,) and s.zk.writes == []
    alive.add(2)
    s.expand(partition, 2)
    assert partition.isr == (ME, 2)


def test_a_broker_gone_after_its_last_fetch_is_not_added_back_at_the_next_epoch(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    alive = {ME, 2}
    s.isr = IsrManager(replicas=s.h.replicas, writer=s.zk, clock=s.h.clock, max_lag_ms=LAG_MS,
                       broker_alive=lambda broker_id: broker_id in alive)
    partition = s.lead()
    partition.update_follower_fetch(2, 0, s.h.clock())
    # Broker 2 shut down: the controller took it out at epoch 1, then its registration went.
    s.lead(isr=(ME,), leader_epoch=1, version=1)
    s.h.clock.now += 1
    s.expand(partition, 2)  # what a late fetch of the previous epoch could have asked for
    assert partition.isr == (ME,) and s.zk.writes == []
    alive.discard(2)
    partition.update_follower_fetch(2, 0, s.h.clock())
    s.expand(partition, 2)
    assert partition.isr == (ME,) and s.zk.writes == []
    s.h.clock.now += 10 * LAG_MS  # an idle partition: nothing new to fetch, and it stays out
    s.shrink()
    assert partition.isr == (ME,) and s.zk.writes == []
