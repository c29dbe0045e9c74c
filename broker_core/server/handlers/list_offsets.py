"""ListOffsets: earliest (-2), latest (-1, the LSO under read_committed) and by timestamp."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import check_leader_epoch, leader_partition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.list_offsets import ListOffsetsResponse
from spate.structs import IsolationLevel

R = ListOffsetsResponse
LATEST = -1
EARLIEST = -2


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    topics = [
        R.ListOffsetsTopicResponse(
            name=topic.name,
            partitions=[_lookup(ctx, body.isolation_level, topic.name, p) for p in topic.partitions],
        )
        for topic in body.topics
    ]
    return R(throttle_time_ms=0, topics=topics)


def _lookup(ctx: BrokerContext, isolation_level: int, topic: str, wanted: Any) -> Any:
    index = wanted.partition_index
    try:
        partition = leader_partition(ctx, topic, index)
        check_leader_epoch(partition, wanted.current_leader_epoch)
        timestamp = wanted.timestamp
        if timestamp == EARLIEST:
            offset = partition.log_start_offset
        elif timestamp == LATEST:
            committed = isolation_level == IsolationLevel.READ_COMMITTED
            offset = partition.last_stable_offset if committed else partition.high_watermark
        else:
            found = partition.offset_for_timestamp(timestamp)
            if found is None:
                return R.ListOffsetsPartitionResponse(partition_index=index, error_code=ErrorCode.NONE)
            timestamp, offset = found
            return R.ListOffsetsPartitionResponse(
                partition_index=index,
                error_code=ErrorCode.NONE,
                timestamp=timestamp,
                offset=offset,
                leader_epoch=partition.leader_epoch,
            )
        return R.ListOffsetsPartitionResponse(
            partition_index=index, error_code=ErrorCode.NONE, timestamp=-1, offset=offset,
            leader_epoch=partition.leader_epoch,
        )
    except Exception as exc:
        code = error_code_for(exc, where="list_offsets")
        return R.ListOffsetsPartitionResponse(partition_index=index, error_code=code)
