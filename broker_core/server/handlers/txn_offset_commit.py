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

from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import group_offsets_settled
from broker_core.server.handlers.offset_commit import requested_offsets
from broker_core.server.handlers.requested_partitions import answer_each_partition
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitResponse

R = TxnOffsetCommitResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    version = request.api_version
    offsets, errors = requested_offsets(ctx, body.topics)
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
