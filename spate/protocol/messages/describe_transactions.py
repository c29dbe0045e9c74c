"""DescribeTransactions (API key 65): the state of transactional ids this broker coordinates (KIP-664).

Every version is flexible. ``transaction_state`` is Kafka's state name
(``Ongoing``, ``PrepareCommit``, ``CompleteAbort``, ...).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

DescribeTransactionsRequest = message(
    "DescribeTransactionsRequest",
    api_key=ApiKey.DESCRIBE_TRANSACTIONS,
    versions=(0, 0),
    flexible_from=0,
    fields=[Field("transactional_ids", Array(STRING))],
)

DescribeTransactionsResponse = message(
    "DescribeTransactionsResponse",
    api_key=ApiKey.DESCRIBE_TRANSACTIONS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "transaction_states",
            Array(
                Struct(
                    "TransactionState",
                    Field("error_code", INT16),
                    Field("transactional_id", STRING),
                    Field("transaction_state", STRING),
                    Field("transaction_timeout_ms", INT32),
                    # -1 when no transaction is open.
                    Field("transaction_start_time_ms", INT64),
                    Field("producer_id", INT64),
                    Field("producer_epoch", INT16),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "TopicData",
                                Field("topic", STRING),
                                Field("partitions", Array(INT32)),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
