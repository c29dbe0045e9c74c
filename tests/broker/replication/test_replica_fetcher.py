"""The replica fetcher against a scripted leader: what it asks, and what it does with each answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Awaitable, Callable

import pytest

from broker_core.replication.fetch_state import FetchPhase, InitialFetchState
from broker_core.replication.leader_endpoint import LeaderUnreachableError
from broker_core.replication.partition import Partition
from broker_core.replication.replica_fetcher import ReplicaFetcher
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.protocol import ErrorCode
from spate.records import Record, build_batch
from spate.structs import TopicPartition
from tests.broker.replication.scripted_leader import LEADER, ScriptedLeader

TP = TopicPartition("t", 0)
BACKOFF_MS = 50
E = ErrorCode


def records(count: int, value: bytes = b"v") -> bytes:
    return build_batch([Record(i, 1_000 + i, None, value) for i in range(count)])


def open_log(directory: Path) -> UnifiedLog:
    return UnifiedLog(LocalLog.open(directory, LogConfig(), clock=lambda: 0), clock=lambda: 0,
                      producer_id_expiration_ms=60_000)


def leader_partition(directory: Path, epoch: int = 1) -> Partition:
    return Partition("t", 0, open_log(directory), leader_epoch=epoch, node_id=1)


def new_follower(directory: Path, epoch: int = 1) -> Partition:
    follower = Partition("t", 0, open_log(directory), leader_epoch=None, node_id=2)
    follower.make_follower(1, epoch, isr=(1,), replicas=(1, 2))
    return follower


def log_bytes(partition: Partition) -> bytes:
    return partition.log.read(partition.log_start_offset, 1 << 24).read_bytes() if partition.log_end_offset else b""


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


class Harness:
    """A follower partition, its fetcher and the scripted leader, on one event loop."""

    def __init__(self, leader: Partition, follower: Partition) -> None:
        self.leader_partition = leader
        self.follower = follower
        self.hosted: dict[TopicPartition, Partition] = {TP: follower}
        self.leader = ScriptedLeader({TP: leader})
        self.fetcher = ReplicaFetcher(name="fetcher-test", leader=self.leader, partitions=self.hosted.get,
                                      backoff_ms=BACKOFF_MS)

    def start(self, epoch: int | None = None) -> None:
        epoch = self.follower.leader_epoch if epoch is None else epoch
        self.fetcher.add_partitions({TP: InitialFetchState(LEADER, epoch, self.follower.high_watermark)})
        self.fetcher.start()

    async def caught_up(self) -> None:
        await eventually(lambda: log_bytes(self.follower) == log_bytes(self.leader_partition),
                         "the follower to hold the leader's log")

    async def stop(self) -> None:
        await self.fetcher.shutdown(5)


def test_the_follower_takes_the_leaders_batches_unchanged_with_its_high_watermark(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    for n in (3, 1, 5):
        leader.append_records(records(n))
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.start()
        await h.caught_up()
        assert h.follower.log_end_offset == 9
        await eventually(lambda: h.follower.high_watermark == 9, "the leader's high watermark")
        assert h.follower.log.epoch_cache.entries == leader.log.epoch_cache.entries
        leader.append_records(records(2, b"later"))
        await h.caught_up()
        await h.stop()
        assert h.leader.closed >= 1

    run(scenario)
    fetches = h.leader.asked_for("fetch")
    assert fetches[0][TP].fetch_offset == 0 and fetches[0][TP].current_leader_epoch == 1
    assert all(position[TP].log_start_offset == 0 for position in fetches)
    # A new follower has no epochs: it asked nothing about them before fetching.
    assert h.leader.asked_for("epoch") == []


def test_the_high_watermark_is_capped_by_what_the_follower_holds(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(4))
    h = Harness(leader, new_follower(tmp_path / "follower"))
    leader.high_watermark = 4

    async def scenario() -> None:
        h.leader.hold_fetch = asyncio.Event()
        h.start()
        await h.leader.fetch_started.wait()
        leader.append_records(records(10))  # the leader's HW moves past what this fetch returns
        h.leader.hold_fetch.set()
        await h.caught_up()
        assert h.follower.high_watermark <= h.follower.log_end_offset
        await h.stop()

    run(scenario)


def test_the_follower_cuts_its_divergent_tail_where_the_leaders_epoch_ended(tmp_path: Path) -> None:
    # Both wrote offsets 0-3 at epoch 1; the follower (then leader) wrote 4-6 at epoch 1 the new leader never had.
    old = leader_partition(tmp_path / "follower", epoch=1)
    old.append_records(records(4))
    leader = leader_partition(tmp_path / "leader", epoch=1)
    leader.log.append_as_follower(log_bytes(old))
    old.append_records(records(3, b"lost"))
    leader.make_leader(2)
    leader.append_records(records(2, b"new"))
    old.make_follower(1, 2, isr=(1,), replicas=(1, 2))
    h = Harness(leader, old)

    async def scenario() -> None:
        h.start()
        await h.caught_up()
        await h.stop()

    run(scenario)
    assert h.leader.asked_for("epoch") == [{TP: (2, 1)}]
    assert [(e.epoch, e.start_offset) for e in old.log.epoch_cache.entries] == [(1, 0), (2, 4)]
    assert old.log_end_offset == 6 and b"lost" not in log_bytes(old)


def test_a_follower_without_the_leaders_epoch_goes_back_an_epoch_and_asks_again(tmp_path: Path) -> None:
    # The follower led epochs 1 (0-4) and 3 (5-7); the leader has epoch 1 only to 3, then 2 (4-5) and 4 (6-8).
    old = leader_partition(tmp_path / "follower", epoch=1)
    old.append_records(records(4))
    leader = leader_partition(tmp_path / "leader", epoch=1)
    leader.log.append_as_follower(log_bytes(old))
    old.append_records(records(1, b"lost1"))
    old.make_leader(3)
    old.append_records(records(3, b"lost3"))
    leader.make_leader(2)
    leader.append_records(records(2, b"two"))
    leader.make_leader(4)
    leader.append_records(records(3, b"four"))
    old.make_follower(1, 4, isr=(1,), replicas=(1, 2))
    h = Harness(leader, old)

    async def scenario() -> None:
        h.start()
        await h.caught_up()
        await h.stop()

    run(scenario)
    # Epoch 3 -> the leader's epoch 2 ends at 6; the follower has no epoch 2, so it cuts to the end of its
    # epoch 1 (5) and asks about epoch 1, which ended at 4 on the leader.
    assert h.leader.asked_for("epoch") == [{TP: (4, 3)}, {TP: (4, 1)}]
    assert [(e.epoch, e.start_offset) for e in old.log.epoch_cache.entries] == [(1, 0), (2, 4), (4, 6)]
    assert b"lost" not in log_bytes(old)


def test_a_follower_below_the_leaders_log_start_empties_its_log_and_starts_there(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    for _ in range(6):
        leader.append_records(records(1))
    leader.delete_records_before(4)
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.start()
        await eventually(lambda: h.follower.log_end_offset == 6, "the follower to fetch from offset 4")
        await h.stop()

    run(scenario)
    assert h.follower.log_start_offset == 4
    assert h.leader.asked_for("offsets") == [(TP, "latest"), (TP, "earliest")]
    assert log_bytes(h.follower) == leader.log.read(4, 1 << 20).read_bytes()


def test_a_follower_past_the_leaders_log_end_truncates_to_it(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(3))
    follower = new_follower(tmp_path / "follower")
    follower.append_as_follower(log_bytes(leader))
    follower.append_as_follower(build_batch([Record(3, 1, None, b"extra")], base_offset=3))
    h = Harness(leader, follower)

    async def scenario() -> None:
        h.start()
        state = h.fetcher.fetch_state(TP)
        state.move_to(FetchPhase.FETCHING, follower.log_end_offset)  # as if truncation had found nothing
        await eventually(lambda: follower.log_end_offset == 3, "truncation to the leader's end")
        await h.stop()

    run(scenario)
    assert log_bytes(follower) == log_bytes(leader)
    assert h.leader.asked_for("offsets") == [(TP, "latest")]


def test_the_leaders_log_start_moves_the_followers(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    for _ in range(5):
        leader.append_records(records(1))
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.start()
        await h.caught_up()
        leader.delete_records_before(3)
        await eventually(lambda: h.follower.log_start_offset == 3, "the follower's log start to follow")
        await h.stop()

    run(scenario)


@pytest.mark.parametrize("code", [E.NOT_LEADER_OR_FOLLOWER, E.UNKNOWN_LEADER_EPOCH, E.UNKNOWN_TOPIC_OR_PARTITION])
def test_errors_while_news_of_a_leader_change_travels_are_retried_after_the_backoff(tmp_path: Path,
                                                                                    code: ErrorCode) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(2))
    h = Harness(leader, new_follower(tmp_path / "follower"))
    h.leader.fail("fetch", TP, code, code)

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        h.start()
        await h.caught_up()
        assert loop.time() - started >= 2 * BACKOFF_MS / 1000
        await h.stop()

    run(scenario)
    assert len(h.leader.asked_for("fetch")) >= 3


def test_truncation_errors_are_retried_after_the_backoff(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(2))
    follower = new_follower(tmp_path / "follower")
    follower.append_as_follower(log_bytes(leader))
    leader.append_records(records(2))
    h = Harness(leader, follower)
    h.leader.fail("epoch", TP, E.UNKNOWN_LEADER_EPOCH)

    async def scenario() -> None:
        h.start()
        await h.caught_up()
        await h.stop()

    run(scenario)
    assert len(h.leader.asked_for("epoch")) == 2


@pytest.mark.parametrize("api", ["fetch", "epoch"])
def test_a_fenced_epoch_pauses_the_partition_until_a_newer_epoch_arrives(tmp_path: Path, api: str) -> None:
    leader = leader_partition(tmp_path / "leader", epoch=2)
    leader.append_records(records(2))
    follower = new_follower(tmp_path / "follower")
    if api == "epoch":  # a follower with an epoch asks where it ended first
        follower.append_as_follower(log_bytes(leader))
        leader.append_records(records(1))
    h = Harness(leader, follower)
    h.leader.fail(api, TP, E.FENCED_LEADER_EPOCH)

    async def scenario() -> None:
        h.start(epoch=1)
        await eventually(lambda: h.fetcher.fetch_state(TP) is None, "the partition to leave the fetcher")
        asked = len(h.leader.asked)
        await asyncio.sleep(3 * BACKOFF_MS / 1000)
        assert len(h.leader.asked) == asked  # nothing more is asked for it
        assert h.fetcher.idle
        h.fetcher.add_partitions({TP: InitialFetchState(LEADER, 2, follower.high_watermark)})
        await h.caught_up()
        await h.stop()

    run(scenario)


def test_an_unreachable_leader_is_retried_after_the_backoff_until_it_answers(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(2))
    h = Harness(leader, new_follower(tmp_path / "follower"))
    h.leader.unreachable = True

    async def scenario() -> None:
        h.start()
        await eventually(lambda: len(h.leader.asked_for("fetch")) >= 3, "retries")
        assert h.follower.log_end_offset == 0
        state = h.fetcher.fetch_state(TP)
        assert state is not None and state.phase is FetchPhase.FETCHING
        h.leader.unreachable = False
        await h.caught_up()
        await h.stop()

    run(scenario)


@pytest.mark.timeout(30)  # without the guard, the loop outlives asyncio.run's cancellation and never ends
def test_a_stop_ends_the_fetcher_even_when_the_cancel_is_swallowed_on_its_way(tmp_path: Path) -> None:
    # Python 3.11's wait_for can turn a cancel that meets a failing exchange into that exchange's error.
    h = Harness(leader_partition(tmp_path / "leader"), new_follower(tmp_path / "follower"))
    answering = asyncio.Event()

    async def swallowing_fetch(_positions: object) -> dict:
        answering.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise LeaderUnreachableError("connection closed while stopping") from None
        return {}

    h.leader.fetch = swallowing_fetch  # type: ignore[method-assign]

    async def scenario() -> None:
        h.start()
        await asyncio.wait_for(answering.wait(), 5)
        task = h.fetcher.stop()
        assert task is not None
        done, _ = await asyncio.wait([task], timeout=5)
        assert done == {task} and task.cancelled()

    run(scenario)


def test_an_answer_for_a_partition_removed_meanwhile_is_ignored(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    leader.append_records(records(2))
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.leader.hold_fetch = asyncio.Event()
        h.start()
        await h.leader.fetch_started.wait()
        assert TP in h.fetcher.remove_partitions([TP])
        h.leader.hold_fetch.set()
        await asyncio.sleep(0.05)
        assert h.follower.log_end_offset == 0
        await h.stop()

    run(scenario)


def test_an_answer_for_an_older_state_of_a_re_added_partition_is_ignored(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader", epoch=3)
    leader.append_records(records(2))
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.leader.hold_fetch = asyncio.Event()
        h.start(epoch=2)
        await h.leader.fetch_started.wait()
        h.fetcher.add_partitions({TP: InitialFetchState(LEADER, 3, 0)})
        assert h.fetcher.fetch_state(TP).phase is FetchPhase.TRUNCATING
        h.leader.hold_fetch.set()
        await eventually(lambda: len(h.leader.asked_for("fetch")) >= 2, "a fetch at the new epoch")
        await h.caught_up()
        await h.stop()

    run(scenario)
    epochs = [position[TP].current_leader_epoch for position in h.leader.asked_for("fetch")]
    assert epochs[0] == 2 and set(epochs[1:]) == {3}


def test_a_partition_no_longer_hosted_leaves_the_fetcher(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.hosted.clear()
        h.start()
        await eventually(lambda: h.fetcher.idle, "the fetcher to drop the partition")
        await h.stop()

    run(scenario)


def test_the_same_epoch_added_again_keeps_the_partitions_state(tmp_path: Path) -> None:
    leader = leader_partition(tmp_path / "leader")
    h = Harness(leader, new_follower(tmp_path / "follower"))

    async def scenario() -> None:
        h.start()
        before = h.fetcher.fetch_state(TP)
        h.fetcher.add_partitions({TP: InitialFetchState(LEADER, 1, 0)})
        assert h.fetcher.fetch_state(TP) is before
        await h.stop()

    run(scenario)
