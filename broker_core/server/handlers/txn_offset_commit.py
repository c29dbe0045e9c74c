"""TxnOffsetCommit: a transactional producer commits a group's offsets inside its transaction.

Partitions of unknown topics are refused here, as for OffsetCommit; the
group coordinator checks the group and the transaction and stores the rest,
pending until the transaction ends. From v3 the request carries the
consumer's group metadata (KIP-447: generation, member id, group instance
id); the coordinator refuses a fenced static member (FENCED_INSTANCE_ID), an
unknown member (UNKNOWN_MEMBER_ID) and a stale generation
(ILLEGAL_GENERATION), so a zombie consumer's producer cannot commit.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import group_offsets_settled
from broker_core.server.handlers.offset_commit import requested_offsets
from broker_core.server.handlers.requested_partitions import answer_each_partition
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitResponse
from spate.structs import TopicPartition

R = TxnOffsetCommitResponse


def _authorized_offsets(ctx: BrokerContext, request: Request) -> tuple[dict[TopicPartition, Any],
                                                                      dict[TopicPartition, ErrorCode]]:
    """Write on the transactional id, Read on the group, then Read on each topic."""
    body, read = request.body, acl_checks.Op.READ
    every = [TopicPartition(t.name, p.partition_index) for t in body.topics for p in t.partitions]
    if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, body.transactional_id):
        return {}, dict.fromkeys(every, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not acl_checks.group(ctx, request, read, body.group_id):
        return {}, dict.fromkeys(every, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    refused = acl_checks.refused_topics(ctx, request, read, (t.name for t in body.topics))
    offsets, errors = requested_offsets(ctx, [t for t in body.topics if t.name not in refused])
    errors.update({tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED for tp in every if tp.topic in refused})
    return offsets, errors


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    version = request.api_version
    offsets, errors = _authorized_offsets(ctx, request)
    if offsets:
        if ctx.group_coordinator is None:
            errors.update({tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in offsets})
        else:
            errors.update(
                ctx.group_coordinator.handle_txn_offset_commit(
                    transactional_id=body.transactional_id,
                    group_id=body.group_id,
                    producer_id=body.producer_id,
                    producer_epoch=body.producer_epoch,
                    offsets=offsets,
                    generation_id=body.generation_id,
                    member_id=body.member_id,
                    group_instance_id=body.group_instance_id,
                )
            )
            if any(errors[tp] == ErrorCode.NONE for tp in offsets):
                # The transaction's offsets must survive the group coordinator's leader before the marker ends it.
                settled = await group_offsets_settled(ctx, body.group_id)
                errors.update({tp: settled for tp in offsets if errors[tp] == ErrorCode.NONE})
    return R(
        throttle_time_ms=0,
        topics=answer_each_partition(
            body.topics, R.TxnOffsetCommitResponseTopic, R.TxnOffsetCommitResponsePartition,
            lambda tp: for_version(errors[tp], version),
        ),
    )
