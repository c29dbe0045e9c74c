"""AddPartitionsToTxn (API key 24): partitions join an ongoing transaction.

Up to v3 a producer names one transaction in the ``v3_and_below_`` fields
(Kafka's names). From v4 the request is a broker's (KIP-890): a batch of
transactions, each of which may be ``verify_only`` (is each partition
already in the ongoing transaction?), answered per transaction, with a
top-level error for the request as a whole. v5 lets the answer carry
TRANSACTION_ABORTABLE. Flexible from v3.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

FIRST_BROKER_VERSION = 4

AddPartitionsToTxnRequest = message(
    "AddPartitionsToTxnRequest",
    api_key=ApiKey.ADD_PARTITIONS_TO_TXN,
    versions=(0, 5),
    flexible_from=3,
    fields=[
        Field(
            "transactions",
            Array(
                Struct(
                    "AddPartitionsToTxnTransaction",
                    Field("transactional_id", STRING),
                    Field("producer_id", INT64),
                    Field("producer_epoch", INT16),
                    Field("verify_only", BOOLEAN, default=False),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "AddPartitionsToTxnTransactionTopic",
                                Field("name", STRING),
                                Field("partitions", Array(INT32)),
                            )
                        ),
                    ),
                )
            ),
            versions=(4, None),
        ),
        Field("v3_and_below_transactional_id", STRING, versions=(0, 3), default=""),
        Field("v3_and_below_producer_id", INT64, versions=(0, 3), default=-1),
        Field("v3_and_below_producer_epoch", INT16, versions=(0, 3), default=-1),
        Field(
            "v3_and_below_topics",
            Array(
                Struct(
                    "AddPartitionsToTxnTopic",
                    Field("name", STRING),
                    Field("partitions", Array(INT32)),
                )
            ),
            versions=(0, 3),
        ),
    ],
)


def _topic_result(name: str, partition_name: str) -> Struct:
    # Kafka shares one struct between v3's list and v4's per-transaction lists; here each has its own name.
    return Struct(
        name,
        Field("name", STRING),
        Field(
            "results_by_partition",
            Array(Struct(partition_name, Field("partition_index", INT32), Field("partition_error_code", INT16))),
        ),
    )


AddPartitionsToTxnResponse = message(
    "AddPartitionsToTxnResponse",
    api_key=ApiKey.ADD_PARTITIONS_TO_TXN,
    versions=(0, 5),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, versions=(4, None), default=0),
        Field(
            "results_by_transaction",
            Array(
                Struct(
                    "AddPartitionsToTxnResult",
                    Field("transactional_id", STRING),
                    Field("topic_results", Array(_topic_result("TransactionTopicResult", "TransactionPartitionResult"))),
                )
            ),
            versions=(4, None),
        ),
        Field(
            "results_by_topic_v3_and_below",
            Array(_topic_result("AddPartitionsToTxnTopicResult", "AddPartitionsToTxnPartitionResult")),
            versions=(0, 3),
        ),
    ],
)
