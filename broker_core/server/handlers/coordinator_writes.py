"""The coordinator APIs' wait for their writes to replicate (see :mod:`broker_core.server.replication_barrier`)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from broker_core.server.context import BrokerContext
from broker_core.server.replication_barrier import coordinator_write_settled
from spate.protocol.errors import ErrorCode
from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.protocol.internal_records.transaction_log import TRANSACTION_STATE_TOPIC


async def txn_state_settled(ctx: BrokerContext, transactional_id: str) -> ErrorCode:
    """Wait for the ``__transaction_state`` partition holding ``transactional_id`` to replicate its writes."""
    coordinator = ctx.txn_coordinator
    partition = coordinator.partition_for(transactional_id)
    return await coordinator_write_settled(ctx.replicas, TRANSACTION_STATE_TOPIC, partition,
                                           ctx.config.get_int("request.timeout.ms"))


async def group_offsets_settled(ctx: BrokerContext, group_id: str) -> ErrorCode:
    """Wait for the ``__consumer_offsets`` partition of ``group_id`` to replicate its writes."""
    partition = ctx.group_coordinator.partition_for(group_id)
    return await coordinator_write_settled(ctx.replicas, CONSUMER_OFFSETS_TOPIC, partition,
                                           ctx.config.get_int("offsets.commit.timeout.ms"))


def complete_once_group_settled(
    ctx: BrokerContext, group_id: str, future: asyncio.Future[Any], response: Any,
    failed: Callable[[ErrorCode], Any],
) -> None:
    """Complete ``future`` with ``response`` once the group's ``__consumer_offsets`` partition has replicated
    what the coordinator wrote (a rebalance's assignment, a static member's new id): otherwise a coordinator
    failing over could come back without it and fence the members it answered. ``failed(code)`` is the answer
    when the write cannot be confirmed. The wait runs in a task of its own, so no request worker waits;
    when nothing is left to replicate (always, with one replica) the answer is given at once, without one:
    a rebalance answers every member twice, and a task per answer would be a good part of its cost."""
    if _group_offsets_replicated(ctx, group_id):
        future.set_result(response)
        return

    async def settle() -> None:
        code = await group_offsets_settled(ctx, group_id)
        if not future.done():
            future.set_result(response if code == ErrorCode.NONE else failed(code))

    task = asyncio.ensure_future(settle())
    future.add_done_callback(lambda _done, pending=task: None)  # keeps the task referenced until answered


def _group_offsets_replicated(ctx: BrokerContext, group_id: str) -> bool:
    """Whether every write to the group's ``__consumer_offsets`` partition is already on its in-sync replicas."""
    led = ctx.replicas.get(CONSUMER_OFFSETS_TOPIC, ctx.group_coordinator.partition_for(group_id))
    if led is None:
        return False
    done, error = led.check_enough_replicas_reach_offset(led.log_end_offset)
    return done and error == ErrorCode.NONE
