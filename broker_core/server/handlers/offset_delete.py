"""OffsetDelete: drops a group's offsets for partitions of topics it is not consuming."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.handlers.requested_partitions import answer_each_partition, known_partitions
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_delete import OffsetDeleteResponse

R = OffsetDeleteResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    known, errors = known_partitions(ctx, body.topics)
    result = ctx.group_coordinator.delete_offsets(group_id=body.group_id, partitions=[tp for tp, _ in known])
    if result.error != ErrorCode.NONE:
        return R(error_code=result.error, throttle_time_ms=0, topics=[])
    errors.update(result.partitions)
    return R(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=answer_each_partition(
            body.topics, R.OffsetDeleteResponseTopic, R.OffsetDeleteResponsePartition, lambda tp: errors[tp]
        ),
    )
