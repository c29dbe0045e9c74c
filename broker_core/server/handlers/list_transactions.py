"""ListTransactions: the transactional ids this broker coordinates, filtered (KIP-664, KIP-994).

Filters combine: a state name among ``state_filters`` (Kafka's names,
``Ongoing`` and so on; names it does not know are echoed back in
``unknown_state_filters``), a producer id among ``producer_id_filters``,
and from v1 a transaction open for longer than ``duration_filter``
milliseconds (as in Kafka, an id with no open transaction passes it). An
empty filter matches everything; Dead ids are never listed. Admin clients
ask every broker and merge the answers; while a partition of
``__transaction_state`` is still loading the answer is
COORDINATOR_LOAD_IN_PROGRESS (the client retries), as Kafka answers.
"""

from __future__ import annotations

from typing import Any

from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.internal_records.transaction_log import TxnState
from spate.protocol.messages.list_transactions import ListTransactionsResponse

R = ListTransactionsResponse
STATES_BY_NAME = {state.display_name: state for state in TxnState}


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    unknown = [name for name in body.state_filters if name not in STATES_BY_NAME]
    if ctx.txn_coordinator is None:
        return R(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, unknown_state_filters=unknown)
    if ctx.txn_coordinator.is_loading:
        return R(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, unknown_state_filters=unknown)
    states = {STATES_BY_NAME[name] for name in body.state_filters if name in STATES_BY_NAME}
    if body.state_filters and not states:
        # Only unknown states were asked for: nothing can match.
        return R(throttle_time_ms=0, error_code=ErrorCode.NONE, unknown_state_filters=unknown)
    producer_ids = set(body.producer_id_filters)
    now = ctx.clock()
    listed = [
        R.TransactionState(transactional_id=m.transactional_id, producer_id=m.producer_id,
                           transaction_state=m.state.display_name)
        for m in sorted(ctx.txn_coordinator.transactions(), key=lambda m: m.transactional_id)
        if _matches(m, states, producer_ids, body.duration_filter, now)
    ]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, unknown_state_filters=unknown, transaction_states=listed)


def _matches(metadata: TxnMetadata, states: set[TxnState], producer_ids: set[int], duration_ms: int,
             now: int) -> bool:
    if metadata.state is TxnState.DEAD:
        return False
    if producer_ids and metadata.producer_id not in producer_ids:
        return False
    if states and metadata.state not in states:
        return False
    # Kafka's test, kept as is: an id with no open transaction (start -1) passes any duration.
    return duration_ms < 0 or now - metadata.start_ms > duration_ms
