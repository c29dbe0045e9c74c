"""Coordinator writes are answered once replicated: the wait, its timeout, and the errors clients hear."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from broker_core.server.handlers.coordinator_writes import complete_once_group_settled
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replication_barrier import as_coordinator_error, until_replicated
from spate.protocol.errors import ErrorCode

E = ErrorCode


class _Leader:
    """A led partition whose high watermark the test moves."""

    def __init__(self, log_end_offset: int) -> None:
        self.log_end_offset = log_end_offset
        self.high_watermark = 0

    def check_enough_replicas_reach_offset(self, offset: int) -> tuple[bool, ErrorCode]:
        return self.high_watermark >= offset, E.NONE


def _replicas(leader: _Leader | None) -> SimpleNamespace:
    return SimpleNamespace(get=lambda topic, partition: leader, is_offline=lambda topic, partition: False,
                           purgatory=FetchPurgatory())


def test_the_wait_ends_when_the_high_watermark_reaches_the_log_end_as_it_was() -> None:
    async def scenario() -> ErrorCode:
        leader = _Leader(log_end_offset=7)
        replicas = _replicas(leader)
        waiting = asyncio.ensure_future(until_replicated(replicas, "__transaction_state", 0, 5_000))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        leader.log_end_offset = 9  # later writes do not extend the wait
        leader.high_watermark = 7
        replicas.purgatory.notify_append(("__transaction_state", 0))
        return await asyncio.wait_for(waiting, 1)

    assert asyncio.run(scenario()) == E.NONE


def test_a_write_not_replicated_in_time_times_out() -> None:
    result = asyncio.run(until_replicated(_replicas(_Leader(log_end_offset=3)), "__consumer_offsets", 1, 50))
    assert result == E.REQUEST_TIMED_OUT


def test_a_partition_no_longer_led_here_is_not_led() -> None:
    assert asyncio.run(until_replicated(_replicas(None), "__consumer_offsets", 1, 50)) == E.NOT_LEADER_OR_FOLLOWER


def test_clients_hear_kafkas_coordinator_errors() -> None:
    assert as_coordinator_error(E.NONE) == E.NONE
    assert as_coordinator_error(E.NOT_LEADER_OR_FOLLOWER) == E.NOT_COORDINATOR
    assert as_coordinator_error(E.KAFKA_STORAGE_ERROR) == E.NOT_COORDINATOR
    for code in (E.REQUEST_TIMED_OUT, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        assert as_coordinator_error(code) == E.COORDINATOR_NOT_AVAILABLE


def _group_context(leader: _Leader | None, commit_timeout_ms: int = 5_000) -> SimpleNamespace:
    return SimpleNamespace(
        replicas=_replicas(leader),
        group_coordinator=SimpleNamespace(partition_for=lambda group_id: 0),
        config=SimpleNamespace(get_int=lambda name: commit_timeout_ms),
    )


def test_a_group_answer_waits_until_the_coordinator_write_is_replicated() -> None:
    async def scenario() -> str:
        leader = _Leader(log_end_offset=4)
        ctx = _group_context(leader)
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        complete_once_group_settled(ctx, "g", answer, "assignment", lambda code: f"failed {code.name}")
        await asyncio.sleep(0.01)
        assert not answer.done()  # the new member id or assignment is not on the followers yet
        leader.high_watermark = 4
        ctx.replicas.purgatory.notify_append(("__consumer_offsets", 0))
        return await asyncio.wait_for(answer, 1)

    assert asyncio.run(scenario()) == "assignment"


def test_a_group_answer_whose_write_cannot_be_confirmed_is_a_coordinator_error() -> None:
    async def scenario(leader: _Leader | None) -> str:
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        complete_once_group_settled(_group_context(leader, 50), "g", answer, "assignment",
                                    lambda code: f"failed {code.name}")
        return await asyncio.wait_for(answer, 1)

    assert asyncio.run(scenario(_Leader(log_end_offset=4))) == "failed COORDINATOR_NOT_AVAILABLE"
    assert asyncio.run(scenario(None)) == "failed NOT_COORDINATOR"


def test_a_group_answer_with_nothing_left_to_replicate_is_given_at_once() -> None:
    async def scenario() -> str:
        leader = _Leader(log_end_offset=4)
        leader.high_watermark = 4  # one replica: the high watermark moved with the append
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        complete_once_group_settled(_group_context(leader), "g", answer, "assignment",
                                    lambda code: f"failed {code.name}")
        assert answer.done()  # no task, no turn of the loop
        return answer.result()

    assert asyncio.run(scenario()) == "assignment"
