"""DescribeTransactions: what the transaction coordinator holds for each transactional id (KIP-664).

An id this broker does not coordinate answers NOT_COORDINATOR (or
COORDINATOR_LOAD_IN_PROGRESS while its partition loads); an id it
coordinates but does not know, TRANSACTIONAL_ID_NOT_FOUND, as Kafka does.
"""

from __future__ import annotations

from typing import Any

from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_transactions import DescribeTransactionsResponse
from spate.structs import group_by_topic

R = DescribeTransactionsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    return R(throttle_time_ms=0, transaction_states=[_describe(ctx, tid) for tid in request.body.transactional_ids])


def _describe(ctx: BrokerContext, transactional_id: str) -> Any:
    coordinator = ctx.txn_coordinator
    if coordinator is None:
        return _failed(transactional_id, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    error = coordinator.coordinator_error(transactional_id)
    if error != ErrorCode.NONE:
        return _failed(transactional_id, error)
    metadata = coordinator.describe(transactional_id)
    if metadata is None:
        return _failed(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
    return _state(metadata)


def _failed(transactional_id: str, error: ErrorCode) -> Any:
    return R.TransactionState(error_code=error, transactional_id=transactional_id, transaction_state="",
                              transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1,
                              producer_epoch=-1)


def _state(metadata: TxnMetadata) -> Any:
    by_topic = group_by_topic(sorted(metadata.partitions), key=lambda tp: tp, value=lambda tp: tp.partition)
    return R.TransactionState(
        error_code=ErrorCode.NONE,
        transactional_id=metadata.transactional_id,
        transaction_state=metadata.state.display_name,
        transaction_timeout_ms=metadata.timeout_ms,
        transaction_start_time_ms=metadata.start_ms,
        producer_id=metadata.producer_id,
        producer_epoch=metadata.producer_epoch,
        topics=[R.TopicData(topic=topic, partitions=partitions) for topic, partitions in by_topic.items()],
    )
