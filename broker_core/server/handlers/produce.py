"""Produce: validate batch headers, check idempotence, append. Records are never decoded."""

from __future__ import annotations

from typing import Any

from broker_core.cluster.topic_names import is_internal_topic
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.produce import ProduceResponse

R = ProduceResponse
VALID_ACKS = (0, 1, -1)


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    topics = []
    for topic_data in body.topic_data:
        partitions = [
            _append(ctx, body.acks, topic_data.name, data.index, data.records) for data in topic_data.partition_data
        ]
        topics.append(R.TopicProduceResponse(name=topic_data.name, partition_responses=partitions))
    return R(responses=topics, throttle_time_ms=0)


def _append(ctx: BrokerContext, acks: int, topic: str, index: int, records: Any) -> Any:
    try:
        if acks not in VALID_ACKS:
            raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS, f"acks must be 0, 1 or -1, not {acks}")
        if is_internal_topic(topic):
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"clients may not produce to internal topic {topic}")
        partition = leader_partition(ctx, topic, index)
        if records is None:
            raise KafkaError(ErrorCode.INVALID_RECORD, "produce request without records")
        result = partition.append_records(records)
    except Exception as exc:
        return R.PartitionProduceResponse(
            index=index, error_code=error_code_for(exc, where="produce"), base_offset=-1
        )
    if not result.duplicate:
        ctx.replicas.notify_append(partition)
    return R.PartitionProduceResponse(
        index=index,
        error_code=ErrorCode.NONE,
        base_offset=result.base_offset,
        log_append_time_ms=result.log_append_time,
        log_start_offset=result.log_start_offset,
    )
