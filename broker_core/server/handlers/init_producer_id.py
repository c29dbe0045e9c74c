"""InitProducerId: a fresh id at epoch 0 for idempotence, or the transaction coordinator's answer.

From v3 (KIP-360) a producer may name the id and epoch it holds: an
idempotent producer simply gets a fresh id (as Kafka answers), a
transactional one the next epoch unless it has been fenced. The id and the
epoch come together or not at all (INVALID_REQUEST otherwise). Before v4
PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.coordinator_writes import txn_state_settled
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.init_producer_id import InitProducerIdResponse

R = InitProducerIdResponse
NO_PRODUCER_ID = -1
PRODUCER_FENCED_FROM_VERSION = 4


def _refusal(ctx: BrokerContext, request: Request) -> ErrorCode | None:
    """Write on the transactional id; without one, IdempotentWrite on the cluster or Write on some topic."""
    transactional_id = request.body.transactional_id
    if transactional_id is not None:
        if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return None
    if acl_checks.cluster(ctx, request, acl_checks.Op.IDEMPOTENT_WRITE) or \
            acl_checks.any_topic(ctx, request, acl_checks.Op.WRITE):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if (body.producer_id == NO_PRODUCER_ID) != (body.producer_epoch == NO_PRODUCER_ID):
        return _failed(ErrorCode.INVALID_REQUEST)
    refusal = _refusal(ctx, request)
    if refusal is not None:
        return _failed(refusal)
    if body.transactional_id is not None:
        if ctx.txn_coordinator is None:
            return _failed(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        expected = None if body.producer_id == NO_PRODUCER_ID else (body.producer_id, body.producer_epoch)
        result = ctx.txn_coordinator.init_producer_id(body.transactional_id, body.transaction_timeout_ms, expected)
        error = result.error
        if error == ErrorCode.PRODUCER_FENCED and request.api_version < PRODUCER_FENCED_FROM_VERSION:
            error = ErrorCode.INVALID_PRODUCER_EPOCH
        if error == ErrorCode.NONE:
            # The bumped epoch fences older instances only once it survives a coordinator failover.
            error = await txn_state_settled(ctx, body.transactional_id)
        if error != ErrorCode.NONE:
            return _failed(error)
        return R(throttle_time_ms=0, error_code=error, producer_id=result.producer_id,
                 producer_epoch=result.producer_epoch)
    try:
        producer_id = ctx.producer_ids.next_id()
    except Exception as exc:
        return _failed(error_code_for(exc, where="init_producer_id"))
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)


def _failed(error: ErrorCode) -> Any:
    return R(throttle_time_ms=0, error_code=error, producer_id=NO_PRODUCER_ID, producer_epoch=-1)
