"""OffsetDelete: drops a group's offsets for partitions of topics it is not consuming."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.handlers.offset_commit import existing_partitions
from broker_core.storage.files import TopicPartition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_delete import OffsetDeleteResponse

R = OffsetDeleteResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    errors: dict[TopicPartition, ErrorCode] = {}
    requested: list[TopicPartition] = []
    for topic in body.topics:
        known = existing_partitions(ctx, topic.name)
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if p.partition_index in known:
                requested.append(tp)
            else:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    result = ctx.group_coordinator.delete_offsets(group_id=body.group_id, partitions=requested)
    if result.error != ErrorCode.NONE:
        return R(error_code=result.error, throttle_time_ms=0, topics=[])
    errors.update(result.partitions)
    return R(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=[
            R.OffsetDeleteResponseTopic(
                name=topic.name,
                partitions=[
                    R.OffsetDeleteResponsePartition(
                        partition_index=p.partition_index,
                        error_code=errors[TopicPartition(topic.name, p.partition_index)],
                    )
                    for p in topic.partitions
                ],
            )
            for topic in body.topics
        ],
    )
