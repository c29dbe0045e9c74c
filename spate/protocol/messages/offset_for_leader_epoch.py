"""OffsetForLeaderEpoch (API key 23): where a leader epoch ended, for truncation."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

# Consumers send -1; versions before 3 carry no replica id and read as -2.
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2

OffsetForLeaderEpochRequest = message(
    "OffsetForLeaderEpochRequest",
    api_key=ApiKey.OFFSET_FOR_LEADER_EPOCH,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("replica_id", INT32, versions=(3, None), default=DEBUGGING_REPLICA_ID),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetForLeaderTopic",
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OffsetForLeaderPartition",
                                Field("partition", INT32),
                                Field("current_leader_epoch", INT32, versions=(2, None), default=-1),
                                Field("leader_epoch", INT32),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

OffsetForLeaderEpochResponse = message(
    "OffsetForLeaderEpochResponse",
    api_key=ApiKey.OFFSET_FOR_LEADER_EPOCH,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetForLeaderTopicResult",
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "EpochEndOffset",
                                Field("error_code", INT16),
                                Field("partition", INT32),
                                Field("leader_epoch", INT32, versions=(1, None), default=-1),
                                Field("end_offset", INT64, default=-1),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
