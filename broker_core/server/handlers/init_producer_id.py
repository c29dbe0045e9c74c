"""InitProducerId for idempotent producers (no transactional id): a fresh id at epoch 0."""

from __future__ import annotations

from typing import Any

from broker_core.protocol.connection import Request
from broker_core.protocol.errors import ErrorCode
from broker_core.protocol.messages.init_producer_id import InitProducerIdResponse
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for

R = InitProducerIdResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    if request.body.transactional_id is not None:
        # Transactions need the transaction coordinator, which this broker does not run yet.
        return R(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, producer_id=-1, producer_epoch=-1)
    try:
        producer_id = ctx.producer_ids.next_id()
    except Exception as exc:
        return R(throttle_time_ms=0, error_code=error_code_for(exc, where="init_producer_id"), producer_id=-1,
                 producer_epoch=-1)
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)
