"""acks=all produces waiting in the purgatory: answered when the high watermark passes them, or why not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from broker_core.server.delayed_produce import DelayedProduce, ProducePartitionStatus
from broker_core.server.purgatory import FetchPurgatory
from spate.protocol.errors import ErrorCode
from tests.broker.server.replication_harness import LeaderHarness, records

E = ErrorCode


@pytest.fixture
def h(tmp_path: Path) -> LeaderHarness:
    return LeaderHarness(tmp_path)


def appended(h: LeaderHarness, topic: str = "t", index: int = 0, count: int = 2) -> ProducePartitionStatus:
    partition = h.replicas.get(topic, index)
    result = partition.append_records(records(count), required_acks=-1)
    return ProducePartitionStatus(topic, index, E.NONE, base_offset=result.base_offset,
                                  required_offset=result.last_offset + 1, acks_pending=True)


def test_a_single_replica_is_done_at_once(h: LeaderHarness) -> None:
    h.lead(isr=(1,), replicas=(1,))
    status = appended(h)
    assert DelayedProduce([status], h.replicas.get).try_complete()
    assert status.error == E.NONE and not status.acks_pending


def test_the_answer_waits_for_the_follower_to_fetch_past_the_records(h: LeaderHarness) -> None:
    partition = h.lead()

    async def scenario() -> ProducePartitionStatus:
        status = appended(h)
        delayed = DelayedProduce([status], h.replicas.get)
        waiting = asyncio.ensure_future(delayed.wait(h.purgatory, 5_000))
        await asyncio.sleep(0.01)
        partition.update_follower_fetch(2, 1, h.clock())
        h.replicas.notify_append(partition)
        await asyncio.sleep(0.01)
        assert not waiting.done() and status.acks_pending
        partition.update_follower_fetch(2, 2, h.clock())
        h.replicas.notify_append(partition)
        await asyncio.wait_for(waiting, 1)
        return status

    status = asyncio.run(scenario())
    assert status.error == E.NONE and status.base_offset == 0
    assert h.purgatory.waiting == 0


def test_without_the_follower_the_request_times_out(h: LeaderHarness) -> None:
    h.lead()
    status = appended(h)
    asyncio.run(DelayedProduce([status], h.replicas.get).wait(h.purgatory, 50))
    assert status.error == E.REQUEST_TIMED_OUT and status.base_offset == 0
    assert h.purgatory.waiting == 0


def test_an_isr_shrunk_below_min_insync_after_the_append_answers_not_enough_replicas_after_append(
    tmp_path: Path,
) -> None:
    h = LeaderHarness(tmp_path, **{"min.insync.replicas": "2"})
    partition = h.lead()

    async def scenario() -> ProducePartitionStatus:
        status = appended(h)
        waiting = asyncio.ensure_future(DelayedProduce([status], h.replicas.get).wait(h.purgatory, 5_000))
        await asyncio.sleep(0.01)
        partition.apply_isr((1,), partition_epoch=1)
        h.replicas.notify_append(partition)
        await asyncio.wait_for(waiting, 1)
        return status

    assert asyncio.run(scenario()).error == E.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_leadership_lost_while_waiting_answers_not_leader(h: LeaderHarness) -> None:
    partition = h.lead()

    async def scenario() -> list[ProducePartitionStatus]:
        moved = appended(h)
        other = h.lead("u")
        deposed = appended(h, "u")
        waiting = asyncio.ensure_future(DelayedProduce([moved, deposed], h.replicas.get).wait(h.purgatory, 5_000))
        await asyncio.sleep(0.01)
        h.replicas.make_follower("t", 0, 1, {})
        await asyncio.sleep(0.01)
        assert not waiting.done()
        other.depose()
        h.replicas.notify_append(other)
        await asyncio.wait_for(waiting, 1)
        return [moved, deposed]

    assert [s.error for s in asyncio.run(scenario())] == [E.NOT_LEADER_OR_FOLLOWER] * 2
    assert partition.log_end_offset == 2


def test_a_log_dir_failing_while_waiting_answers_a_storage_error(h: LeaderHarness, tmp_path: Path) -> None:
    h.lead()

    async def scenario() -> ProducePartitionStatus:
        status = appended(h)
        delayed = DelayedProduce([status], h.replicas.get, offline=h.replicas.is_offline)
        waiting = asyncio.ensure_future(delayed.wait(h.purgatory, 5_000))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        h.replicas.handle_log_dir_failure(tmp_path)
        await asyncio.wait_for(waiting, 1)
        return status

    assert asyncio.run(scenario()).error == E.KAFKA_STORAGE_ERROR


def test_partitions_that_failed_their_append_keep_their_error(h: LeaderHarness) -> None:
    h.lead(isr=(1,), replicas=(1,))
    failed = ProducePartitionStatus("t", 1, E.UNKNOWN_TOPIC_OR_PARTITION)
    done = appended(h)
    assert DelayedProduce([failed, done], h.replicas.get).try_complete()
    assert (failed.error, done.error) == (E.UNKNOWN_TOPIC_OR_PARTITION, E.NONE)


# --- the purgatory ----------------------------------------------------------------------------


def test_a_watcher_runs_on_every_change_until_it_is_done() -> None:
    purgatory = FetchPurgatory()
    calls: list[str] = []

    def watcher() -> bool:
        calls.append("w")
        return len(calls) == 2

    unwatch = purgatory.watch([("t", 0), ("t", 1)], watcher)
    purgatory.notify_append(("t", 0))
    purgatory.notify_append(("t", 9))
    assert purgatory.waiting == 2
    purgatory.notify_append(("t", 0))
    assert calls == ["w", "w"] and purgatory.waiting == 1
    unwatch()
    purgatory.notify_append(("t", 1))
    assert calls == ["w", "w"] and purgatory.waiting == 0


def test_a_failing_watcher_is_dropped_and_the_others_still_run() -> None:
    purgatory = FetchPurgatory()
    seen: list[int] = []

    def broken() -> bool:
        raise RuntimeError("boom")

    purgatory.watch([("t", 0)], broken)
    purgatory.watch([("t", 0)], lambda: seen.append(1) or False)
    purgatory.notify_append(("t", 0))
    purgatory.notify_append(("t", 0))
    assert seen == [1, 1] and purgatory.waiting == 1


def test_a_leader_re_elected_with_a_smaller_isr_answers_at_once(h: LeaderHarness) -> None:
    h.lead()

    async def scenario() -> ProducePartitionStatus:
        status = appended(h)
        waiting = asyncio.ensure_future(DelayedProduce([status], h.replicas.get).wait(h.purgatory, 5_000))
        await asyncio.sleep(0.01)
        h.lead(isr=(1,), leader_epoch=1)  # the controller took the follower out of the ISR
        await asyncio.wait_for(waiting, 1)
        return status

    assert asyncio.run(scenario()).error == E.NONE
