"""ListTransactions (API key 66): the transactional ids this broker coordinates (KIP-664).

Empty filters match everything; state names the broker does not know come
back in ``unknown_state_filters``. v1 adds ``duration_filter`` (KIP-994):
only transactions open longer than that many milliseconds. Every version is
flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

ListTransactionsRequest = message(
    "ListTransactionsRequest",
    api_key=ApiKey.LIST_TRANSACTIONS,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("state_filters", Array(STRING)),
        Field("producer_id_filters", Array(INT64)),
        Field("duration_filter", INT64, versions=(1, None), default=-1),
    ],
)

ListTransactionsResponse = message(
    "ListTransactionsResponse",
    api_key=ApiKey.LIST_TRANSACTIONS,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("unknown_state_filters", Array(STRING)),
        Field(
            "transaction_states",
            Array(
                Struct(
                    "TransactionState",
                    Field("transactional_id", STRING),
                    Field("producer_id", INT64),
                    Field("transaction_state", STRING),
                )
            ),
        ),
    ],
)
