"""The ListTransactions handler: Kafka's filters over the coordinator's transactional ids."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.server.handlers import list_transactions
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.internal_records.transaction_log import TxnState
from spate.protocol.messages.list_transactions import ListTransactionsRequest
from spate.protocol.request_header import RequestHeader

NOW = 1_000_000


def _txn(tid: str, producer_id: int, state: TxnState, start_ms: int = -1) -> TxnMetadata:
    return TxnMetadata(tid, producer_id, 0, 60000, state, frozenset(), NOW, start_ms=start_ms)


TXNS = [
    _txn("old", 1, TxnState.ONGOING, start_ms=NOW - 120_000),
    _txn("young", 2, TxnState.ONGOING, start_ms=NOW - 1_000),
    _txn("idle", 3, TxnState.COMPLETE_COMMIT),
    _txn("gone", 4, TxnState.DEAD),
]


def _list(*, loading: bool = False, **filters) -> object:
    coordinator = SimpleNamespace(is_loading=loading, transactions=lambda: list(TXNS))
    ctx = SimpleNamespace(txn_coordinator=coordinator, clock=lambda: NOW)
    body = ListTransactionsRequest(**filters)
    request = Request(RequestHeader(ApiKey.LIST_TRANSACTIONS, 1, 1, "t"), body, ApiKey.LIST_TRANSACTIONS, 1, 0)
    return list_transactions.handle(ctx, request)


def _ids(response: object) -> list[str]:
    return [t.transactional_id for t in response.transaction_states]


def test_without_filters_every_id_but_dead_ones_is_listed() -> None:
    assert _ids(_list()) == ["idle", "old", "young"]


def test_state_and_producer_filters_combine() -> None:
    assert _ids(_list(state_filters=["Ongoing"])) == ["old", "young"]
    assert _ids(_list(state_filters=["Ongoing"], producer_id_filters=[2, 3])) == ["young"]


def test_unknown_states_are_echoed_and_match_nothing() -> None:
    response = _list(state_filters=["Unheard"])
    assert (response.unknown_state_filters, _ids(response)) == (["Unheard"], [])


def test_the_duration_filter_keeps_transactions_open_longer_than_it_as_kafka_does() -> None:
    # An id with no open transaction (start -1) passes it, as in Kafka.
    assert _ids(_list(duration_filter=60_000)) == ["idle", "old"]


def test_a_coordinator_still_loading_answers_load_in_progress() -> None:
    assert _list(loading=True).error_code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
