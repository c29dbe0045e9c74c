"""TxnOffsetCommit (API key 28): offsets committed as part of a transaction."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

TxnOffsetCommitRequest = message(
    "TxnOffsetCommitRequest",
    api_key=ApiKey.TXN_OFFSET_COMMIT,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("transactional_id", STRING),
        Field("group_id", STRING),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        # v3+ (KIP-447): the consumer's group metadata, which the coordinator checks when given.
        Field("generation_id", INT32, versions=(3, None), default=-1),
        Field("member_id", STRING, versions=(3, None), default=""),
        Field("group_instance_id", STRING, versions=(3, None), nullable=True, default=None),
        Field(
            "topics",
            Array(
                Struct(
                    "TxnOffsetCommitRequestTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "TxnOffsetCommitRequestPartition",
                                Field("partition_index", INT32),
                                Field("committed_offset", INT64),
                                Field("committed_leader_epoch", INT32, versions=(2, None), default=-1),
                                Field("committed_metadata", STRING, nullable=True),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

TxnOffsetCommitResponse = message(
    "TxnOffsetCommitResponse",
    api_key=ApiKey.TXN_OFFSET_COMMIT,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "TxnOffsetCommitResponseTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "TxnOffsetCommitResponsePartition",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
