"""DescribeProducers (API key 61): the active producers of partitions this broker leads (KIP-664).

What ``kafka-transactions.sh describe-producers`` shows, to find a producer
whose open transaction holds back the last stable offset. Every version is
flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

DescribeProducersRequest = message(
    "DescribeProducersRequest",
    api_key=ApiKey.DESCRIBE_PRODUCERS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "TopicRequest",
                    Field("name", STRING),
                    Field("partition_indexes", Array(INT32)),
                )
            ),
        ),
    ],
)

DescribeProducersResponse = message(
    "DescribeProducersResponse",
    api_key=ApiKey.DESCRIBE_PRODUCERS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "TopicResponse",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "PartitionResponse",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable=True, default=None),
                                Field(
                                    "active_producers",
                                    Array(
                                        Struct(
                                            "ProducerState",
                                            Field("producer_id", INT64),
                                            # int32 on the wire although epochs are int16 (as Kafka declares it).
                                            Field("producer_epoch", INT32),
                                            Field("last_sequence", INT32, default=-1),
                                            Field("last_timestamp", INT64, default=-1),
                                            Field("coordinator_epoch", INT32),
                                            # -1 when the producer has no open transaction here.
                                            Field("current_txn_start_offset", INT64, default=-1),
                                        )
                                    ),
                                ),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
