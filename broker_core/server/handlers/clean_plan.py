"""CleanPlan: describe a partition's log for a compaction job, take a plan's chunks, apply the whole plan.

Any replica answers, leader or follower: each cleans its own log with the
plan. Each partition is answered on its own: the replica checks the leader
epoch the job saw, takes the chunk, and on the last chunk applies the plan
off the event loop and waits for it up to ``timeout_ms`` (REQUEST_TIMED_OUT
after that, while the cleaning goes on). Refusals carry their reason in
``error_message``: OFFSET_OUT_OF_RANGE for a stale plan (the log moved on,
retention deleted the range, a follower has not caught up to the plan's
end), FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH when leadership changed,
NOT_LEADER_OR_FOLLOWER when the partition has no replica here,
INVALID_REQUEST for a chunk out of place, INVALID_CONFIG when the topic is
not compacted or the cleaner is disabled.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker_core.replication.partition import Partition
from broker_core.server.clean_plan_service import CleanPlanService, LogState
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import check_leader_epoch, leader_partition
from broker_core.server.plan_assembly import PlanChunk
from broker_core.storage.cleaner.log_cleaner import CleanResult
from broker_core.storage.files import TopicPartition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.clean_plan import DESCRIBE_ONLY, CleanPlanResponse

R = CleanPlanResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    return _handle(ctx, request.body)


async def _handle(ctx: BrokerContext, body: Any) -> Any:
    timeout_s = max(body.timeout_ms, 0) / 1000
    topics = []
    for topic in body.topics:
        answers = [await _partition(ctx, topic.name, wanted, timeout_s) for wanted in topic.partitions]
        topics.append(R.CleanPlanTopicResult(name=topic.name, partitions=answers))
    return R(throttle_time_ms=0, topics=topics)


async def _partition(ctx: BrokerContext, topic: str, wanted: Any, timeout_s: float) -> Any:
    service = ctx.clean_plans
    tp = TopicPartition(topic, wanted.partition_index)
    state: LogState | None = None
    chunks = 0
    try:
        if service is None:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, "this broker takes no compaction plans")
        partition = hosted_replica(ctx, topic, wanted.partition_index, wanted.current_leader_epoch)
        state = service.describe(tp, partition, ctx.clock())
        if wanted.chunk == DESCRIBE_ONLY:
            return _answer(wanted.partition_index, state)
        service.check_can_clean(tp, partition)
        chunk = PlanChunk(wanted.plan_id, wanted.chunk, wanted.current_leader_epoch, wanted.dirty_start,
                          wanted.dirty_end, wanted.entries)
        pending = service.assembly.add(tp, chunk, ctx.clock())
        chunks = pending.chunks
        if not wanted.last_chunk:
            return _answer(wanted.partition_index, state, chunks=chunks)
        service.assembly.take(tp)
        plan = pending.to_plan(tp)
        result = await _applied(service, plan, timeout_s)
        state = service.describe(tp, partition, ctx.clock())
        return _answer(wanted.partition_index, state, chunks=chunks, result=result)
    except Exception as exc:
        code = error_code_for(exc, where="clean_plan")
        message = exc.message if isinstance(exc, KafkaError) else str(exc)
        return _answer(wanted.partition_index, state, chunks=chunks, error=(code, message))


def hosted_replica(ctx: BrokerContext, topic: str, index: int, current_leader_epoch: int) -> Partition:
    """The partition if this broker holds a replica of it at ``current_leader_epoch`` (-1: any)."""
    hosted = ctx.replicas.hosted(topic, index)
    if hosted is None:
        return leader_partition(ctx, topic, index, current_leader_epoch)  # raises the reason it is not here
    check_leader_epoch(hosted, current_leader_epoch)
    return hosted


async def _applied(service: CleanPlanService, plan: Any, timeout_s: float) -> CleanResult:
    task = service.start_applying(plan)
    try:
        return await asyncio.wait_for(asyncio.shield(task), timeout_s)
    except asyncio.TimeoutError:
        raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"the plan for {plan.topic_partition} is still being applied "
                         f"after {timeout_s:.0f}s; describe the partition to see when it is clean") from None


def _answer(index: int, state: LogState | None, *, chunks: int = 0, result: CleanResult | None = None,
            error: tuple[ErrorCode, str | None] = (ErrorCode.NONE, None)) -> Any:
    code, message = error
    stats = result.stats if result is not None else None
    return R.CleanPlanPartitionResult(
        partition_index=index, error_code=code, error_message=message,
        leader_epoch=state.leader_epoch if state else -1,
        log_start_offset=state.log_start_offset if state else -1,
        high_watermark=state.high_watermark if state else -1,
        first_dirty_offset=state.first_dirty_offset if state else -1,
        clean_end_offset=state.clean_end_offset if state else -1,
        size_bytes=state.size_bytes if state else -1,
        dirty_bytes=state.dirty_bytes if state else -1,
        due=state.due if state else False,
        planner=state.planner if state else "",
        chunks_received=chunks,
        records_read=stats.records_read if stats else 0,
        records_kept=stats.records_kept if stats else 0,
        bytes_read=stats.bytes_read if stats else 0,
        bytes_written=stats.bytes_written if stats else 0,
    )
