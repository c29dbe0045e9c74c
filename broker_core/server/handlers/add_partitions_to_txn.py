"""AddPartitionsToTxn: partitions join the producer's ongoing transaction.

Up to v3 a producer asks for its own transaction and needs Write on the
transactional id and on each topic. From v4 a broker asks (KIP-890), for a
batch of transactions, and needs ClusterAction on the cluster (else the
request as a whole is answered CLUSTER_AUTHORIZATION_FAILED); a transaction
marked ``verify_only`` only asks whether each partition is already in it.
Either way one unknown partition fails its whole transaction: it answers
UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED. Before
v5, TRANSACTION_ABORTABLE is answered INVALID_TXN_STATE, which those
versions know.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import txn_state_settled
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.add_partitions_to_txn import FIRST_BROKER_VERSION, AddPartitionsToTxnResponse
from spate.structs import TopicPartition, group_by_topic

R = AddPartitionsToTxnResponse
TRANSACTION_ABORTABLE_SINCE_VERSION = 5


async def handle(ctx: BrokerContext, request: Request) -> Any:
    if request.api_version >= FIRST_BROKER_VERSION:
        return await _broker_request(ctx, request)
    body = request.body
    partitions = _partitions(body.v3_and_below_topics)
    errors = _client_refusals(ctx, request, partitions) or await _add(
        ctx, body.v3_and_below_transactional_id, body.v3_and_below_producer_id, body.v3_and_below_producer_epoch,
        partitions)
    results = _topic_results(partitions, errors, request.api_version, R.AddPartitionsToTxnTopicResult,
                             R.AddPartitionsToTxnPartitionResult)
    return R(throttle_time_ms=0, results_by_topic_v3_and_below=results)


async def _broker_request(ctx: BrokerContext, request: Request) -> Any:
    body, version = request.body, request.api_version
    if acl_checks.enabled(ctx) and not acl_checks.cluster(ctx, request, acl_checks.Op.CLUSTER_ACTION):
        return R(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    results = []
    for txn in body.transactions:
        partitions = _partitions(txn.topics)
        if txn.verify_only:
            errors = _verify(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions)
        else:
            errors = await _add(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions)
        topics = _topic_results(partitions, errors, version, R.TransactionTopicResult, R.TransactionPartitionResult)
        results.append(R.AddPartitionsToTxnResult(transactional_id=txn.transactional_id, topic_results=topics))
    return R(throttle_time_ms=0, results_by_transaction=results)


def _partitions(topics: Any) -> list[TopicPartition]:
    return list(dict.fromkeys(TopicPartition(topic.name, p) for topic in topics for p in topic.partitions))


def _client_refusals(ctx: BrokerContext, request: Request,
                     partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
    """Write on the transactional id and on each topic; when a topic is refused the others are not attempted."""
    if not acl_checks.enabled(ctx):
        return {}
    body = request.body
    if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, body.v3_and_below_transactional_id):
        return {tp: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for tp in partitions}
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.WRITE, {tp.topic for tp in partitions})
    if not refused:
        return {}
    return {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp.topic in refused else ErrorCode.OPERATION_NOT_ATTEMPTED
            for tp in partitions}


async def _add(ctx: BrokerContext, transactional_id: str, producer_id: int, producer_epoch: int,
               partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
    if ctx.txn_coordinator is None:
        return {tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in partitions}
    errors = ctx.txn_coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions)
    if any(code == ErrorCode.NONE for code in errors.values()):
        # A partition the coordinator forgot after a failover would get no marker: wait for replication.
        settled = await txn_state_settled(ctx, transactional_id)
        errors = {tp: settled if code == ErrorCode.NONE else code for tp, code in errors.items()}
    return errors


def _verify(ctx: BrokerContext, transactional_id: str, producer_id: int, producer_epoch: int,
            partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
    if not transactional_id:
        return {tp: ErrorCode.INVALID_REQUEST for tp in partitions}
    if ctx.txn_coordinator is None:
        return {tp: ErrorCode.COORDINATOR_NOT_AVAILABLE for tp in partitions}
    return ctx.txn_coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)


def _answer(code: ErrorCode, version: int) -> ErrorCode:
    if code is ErrorCode.TRANSACTION_ABORTABLE and version < TRANSACTION_ABORTABLE_SINCE_VERSION:
        return ErrorCode.INVALID_TXN_STATE
    return for_version(code, version)


def _topic_results(partitions: list[TopicPartition], errors: dict[TopicPartition, ErrorCode], version: int,
                   topic_result: Any, partition_result: Any) -> list[Any]:
    by_topic = group_by_topic(
        partitions,
        value=lambda tp: partition_result(partition_index=tp.partition,
                                          partition_error_code=_answer(errors[tp], version)),
    )
    return [topic_result(name=name, results_by_partition=results) for name, results in by_topic.items()]
