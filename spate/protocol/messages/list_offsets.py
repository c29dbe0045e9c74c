"""ListOffsets (API key 2): the offset for a timestamp, or the earliest/latest.

Timestamp -1 asks for the latest offset (the high watermark, or the last
stable offset under read_committed) and -2 for the log start offset.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, INT64, STRING

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
# v7+ (KIP-734): the record with the largest timestamp.
MAX_TIMESTAMP = -3
# v8+ (KIP-405): the first offset still in local storage.
EARLIEST_LOCAL_TIMESTAMP = -4
# v9+ (KIP-1005): the last offset copied to tiered storage.
LATEST_TIERED_TIMESTAMP = -5

ListOffsetsRequest = message(
    "ListOffsetsRequest",
    api_key=ApiKey.LIST_OFFSETS,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("replica_id", INT32, default=-1),
        Field("isolation_level", INT8, versions=(2, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "ListOffsetsTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ListOffsetsPartition",
                                Field("partition_index", INT32),
                                Field("current_leader_epoch", INT32, versions=(4, None), default=-1),
                                Field("timestamp", INT64),
                                # v0 only: how many offsets to list, newest first (Kafka answers at most one).
                                Field("max_num_offsets", INT32, versions=(0, 0), default=1),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

ListOffsetsResponse = message(
    "ListOffsetsResponse",
    api_key=ApiKey.LIST_OFFSETS,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "ListOffsetsTopicResponse",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ListOffsetsPartitionResponse",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                # v0 only: the offsets found, in place of timestamp and offset.
                                Field("old_style_offsets", Array(INT64), versions=(0, 0)),
                                Field("timestamp", INT64, versions=(1, None), default=-1),
                                Field("offset", INT64, versions=(1, None), default=-1),
                                Field("leader_epoch", INT32, versions=(4, None), default=-1),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
