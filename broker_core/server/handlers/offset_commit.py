"""OffsetCommit: partitions of unknown topics are refused here; the coordinator stores the rest."""

from __future__ import annotations

from typing import Any

from broker_core.cluster.errors import UnknownTopicError
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.server.context import BrokerContext
from broker_core.storage.files import TopicPartition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_commit import OffsetCommitResponse

R = OffsetCommitResponse


def existing_partitions(ctx: BrokerContext, topic: str) -> frozenset[int]:
    try:
        return frozenset(ctx.store.get_topic(topic).partitions)
    except UnknownTopicError:
        return frozenset()


def requested_offsets(
    ctx: BrokerContext, topics: Any
) -> tuple[dict[TopicPartition, OffsetCommitEntry], dict[TopicPartition, ErrorCode]]:
    """The offsets of a commit request for partitions that exist, and errors for the others."""
    errors: dict[TopicPartition, ErrorCode] = {}
    offsets: dict[TopicPartition, OffsetCommitEntry] = {}
    for topic in topics:
        known = existing_partitions(ctx, topic.name)
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if p.partition_index in known:
                offsets[tp] = OffsetCommitEntry(p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
            else:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return offsets, errors


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    offsets, errors = requested_offsets(ctx, body.topics)
    if offsets:
        errors.update(
            ctx.group_coordinator.commit_offsets(
                group_id=body.group_id,
                member_id=body.member_id,
                group_instance_id=body.group_instance_id,
                generation_id=body.generation_id_or_member_epoch,
                offsets=offsets,
                retention_time_ms=body.retention_time_ms,
            )
        )
    return R(
        throttle_time_ms=0,
        topics=[
            R.OffsetCommitResponseTopic(
                name=topic.name,
                partitions=[
                    R.OffsetCommitResponsePartition(
                        partition_index=p.partition_index,
                        error_code=errors[TopicPartition(topic.name, p.partition_index)],
                    )
                    for p in topic.partitions
                ],
            )
            for topic in body.topics
        ],
    )
