"""AddOffsetsToTxn: the group's ``__consumer_offsets`` partition joins the transaction."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import txn_state_settled
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnResponse

R = AddOffsetsToTxnResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, body.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not acl_checks.group(ctx, request, acl_checks.Op.READ, body.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif ctx.txn_coordinator is None or ctx.group_coordinator is None:
        error = ErrorCode.COORDINATOR_NOT_AVAILABLE
    else:
        error = ctx.txn_coordinator.add_offsets(body.transactional_id, body.producer_id, body.producer_epoch,
                                                body.group_id)
        if error == ErrorCode.NONE:
            error = await txn_state_settled(ctx, body.transactional_id)
    return R(throttle_time_ms=0, error_code=for_version(error, request.api_version))
