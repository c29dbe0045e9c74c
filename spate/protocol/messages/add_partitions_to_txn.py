"""AddPartitionsToTxn (API key 24): partitions join an ongoing transaction.

Field names keep Kafka's ``v3_and_below_`` prefix: v4+ (broker-to-broker
batches of transactions) replaces these fields with a list.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

AddPartitionsToTxnRequest = message(
    "AddPartitionsToTxnRequest",
    api_key=ApiKey.ADD_PARTITIONS_TO_TXN,
    versions=(0, 3),
    flexible_from=3,
    fields=[
        Field("v3_and_below_transactional_id", STRING),
        Field("v3_and_below_producer_id", INT64),
        Field("v3_and_below_producer_epoch", INT16),
        Field(
            "v3_and_below_topics",
            Array(
                Struct(
                    "AddPartitionsToTxnTopic",
                    Field("name", STRING),
                    Field("partitions", Array(INT32)),
                )
            ),
        ),
    ],
)

AddPartitionsToTxnResponse = message(
    "AddPartitionsToTxnResponse",
    api_key=ApiKey.ADD_PARTITIONS_TO_TXN,
    versions=(0, 3),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results_by_topic_v3_and_below",
            Array(
                Struct(
                    "AddPartitionsToTxnTopicResult",
                    Field("name", STRING),
                    Field(
                        "results_by_partition",
                        Array(
                            Struct(
                                "AddPartitionsToTxnPartitionResult",
                                Field("partition_index", INT32),
                                Field("partition_error_code", INT16),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
