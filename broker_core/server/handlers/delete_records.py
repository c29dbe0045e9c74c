"""DeleteRecords: move a partition's log start offset (-1 means its high watermark)."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.delete_records import DeleteRecordsResponse

R = DeleteRecordsResponse
HIGH_WATERMARK = -1


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.DELETE, (topic.name for topic in body.topics))
    topics = [
        R.DeleteRecordsTopicResult(name=topic.name, partitions=[
            _delete(ctx, topic.name, p) if topic.name not in refused else R.DeleteRecordsPartitionResult(
                partition_index=p.partition_index, low_watermark=-1, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            for p in topic.partitions])
        for topic in body.topics
    ]
    return R(throttle_time_ms=0, topics=topics)


def _delete(ctx: BrokerContext, topic: str, wanted: Any) -> Any:
    index = wanted.partition_index
    try:
        partition = leader_partition(ctx, topic, index)
        offset = partition.high_watermark if wanted.offset == HIGH_WATERMARK else wanted.offset
        if offset < 0 or offset > partition.high_watermark:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"cannot delete records before {offset}: the high watermark is {partition.high_watermark}",
            )
        low_watermark = partition.delete_records_before(offset)
    except Exception as exc:
        return R.DeleteRecordsPartitionResult(
            partition_index=index, low_watermark=-1, error_code=error_code_for(exc, where="delete_records")
        )
    return R.DeleteRecordsPartitionResult(partition_index=index, low_watermark=low_watermark, error_code=ErrorCode.NONE)
