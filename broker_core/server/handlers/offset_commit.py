"""OffsetCommit: partitions of unknown topics are refused here; the coordinator stores the rest."""

from __future__ import annotations

from typing import Any, Iterable

from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import group_offsets_settled
from broker_core.server.handlers.requested_partitions import answer_each_partition, known_partitions
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_commit import OffsetCommitResponse
from spate.structs import TopicPartition

R = OffsetCommitResponse


def requested_offsets(
    ctx: BrokerContext, topics: Iterable[Any]
) -> tuple[dict[TopicPartition, OffsetCommitEntry], dict[TopicPartition, ErrorCode]]:
    """The offsets of a commit request for partitions that exist, and errors for the others."""
    known, errors = known_partitions(ctx, topics)
    offsets = {
        tp: OffsetCommitEntry(p.committed_offset, p.committed_leader_epoch, p.committed_metadata) for tp, p in known
    }
    return offsets, errors


def _authorized_offsets(
    ctx: BrokerContext, request: Request
) -> tuple[dict[TopicPartition, OffsetCommitEntry], dict[TopicPartition, ErrorCode]]:
    """Read on the group (else GROUP_AUTHORIZATION_FAILED for all) and on each topic (else
    TOPIC_AUTHORIZATION_FAILED), then the partitions that exist."""
    body, read = request.body, acl_checks.Op.READ
    if not acl_checks.group(ctx, request, read, body.group_id):
        return {}, {TopicPartition(t.name, p.partition_index): ErrorCode.GROUP_AUTHORIZATION_FAILED
                    for t in body.topics for p in t.partitions}
    refused = acl_checks.refused_topics(ctx, request, read, (t.name for t in body.topics))
    offsets, errors = requested_offsets(ctx, [t for t in body.topics if t.name not in refused])
    errors.update({TopicPartition(t.name, p.partition_index): ErrorCode.TOPIC_AUTHORIZATION_FAILED
                   for t in body.topics if t.name in refused for p in t.partitions})
    return offsets, errors


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    offsets, errors = _authorized_offsets(ctx, request)
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
        if any(errors[tp] == ErrorCode.NONE for tp in offsets):
            settled = await group_offsets_settled(ctx, body.group_id)
            errors.update({tp: settled for tp in offsets if errors[tp] == ErrorCode.NONE})
    return R(
        throttle_time_ms=0,
        topics=answer_each_partition(
            body.topics, R.OffsetCommitResponseTopic, R.OffsetCommitResponsePartition, lambda tp: errors[tp]
        ),
    )
