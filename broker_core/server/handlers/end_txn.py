"""EndTxn: commit or abort the producer's transaction."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.coordinator_writes import txn_state_settled
from broker_core.server.handlers.txn_errors import for_version
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.end_txn import EndTxnResponse

R = EndTxnResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if not acl_checks.transactional_id(ctx, request, acl_checks.Op.WRITE, body.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif ctx.txn_coordinator is None:
        error = ErrorCode.COORDINATOR_NOT_AVAILABLE
    else:
        error = ctx.txn_coordinator.end_transaction(body.transactional_id, body.producer_id, body.producer_epoch,
                                                    body.committed)
        if error == ErrorCode.NONE:
            # PrepareCommit/PrepareAbort must survive the coordinator's leader before the producer hears "done".
            error = await txn_state_settled(ctx, body.transactional_id)
    return R(throttle_time_ms=0, error_code=for_version(error, request.api_version))
