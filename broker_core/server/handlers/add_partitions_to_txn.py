"""AddPartitionsToTxn: partitions join the producer's ongoing transaction."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import txn_state_settled
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnResponse
from spate.structs import TopicPartition, group_by_topic

R = AddPartitionsToTxnResponse


def _refusals(ctx: BrokerContext, request: Request,
              partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
    """Write on the transactional id and on each topic; when a topic is refused the others are not attempted."""
    body = request.body
    if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, body.v3_and_below_transactional_id):
        return {tp: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for tp in partitions}
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.WRITE, {tp.topic for tp in partitions})
    if not refused:
        return {}
    return {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp.topic in refused else ErrorCode.OPERATION_NOT_ATTEMPTED
            for tp in partitions}


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    partitions = [TopicPartition(topic.name, p) for topic in body.v3_and_below_topics for p in topic.partitions]
    refused = _refusals(ctx, request, partitions)
    if refused:
        errors = refused
    elif ctx.txn_coordinator is None:
        errors = {tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in partitions}
    else:
        errors = ctx.txn_coordinator.add_partitions(
            body.v3_and_below_transactional_id,
            body.v3_and_below_producer_id,
            body.v3_and_below_producer_epoch,
            partitions,
        )
        if any(code == ErrorCode.NONE for code in errors.values()):
            # A partition the coordinator forgot after a failover would get no marker: wait for replication.
            settled = await txn_state_settled(ctx, body.v3_and_below_transactional_id)
            errors = {tp: settled if code == ErrorCode.NONE else code for tp, code in errors.items()}
    by_topic = group_by_topic(
        partitions,
        value=lambda tp: R.AddPartitionsToTxnPartitionResult(
            partition_index=tp.partition, partition_error_code=for_version(errors[tp], request.api_version)
        ),
    )
    return R(
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            R.AddPartitionsToTxnTopicResult(name=name, results_by_partition=results)
            for name, results in by_topic.items()
        ],
    )
