"""OffsetFetch (API key 9): read a group's committed positions.

From v2 a null topic list asks for every partition the group has committed.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

OffsetFetchRequest = message(
    "OffsetFetchRequest",
    api_key=ApiKey.OFFSET_FETCH,
    versions=(1, 5),
    flexible_from=6,
    fields=[
        Field("group_id", STRING),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetFetchRequestTopic",
                    Field("name", STRING),
                    Field("partition_indexes", Array(INT32)),
                )
            ),
            nullable=(2, None),
        ),
    ],
)

OffsetFetchResponse = message(
    "OffsetFetchResponse",
    api_key=ApiKey.OFFSET_FETCH,
    versions=(1, 5),
    flexible_from=6,
    fields=[
        Field("throttle_time_ms", INT32, versions=(3, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetFetchResponseTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OffsetFetchResponsePartition",
                                Field("partition_index", INT32),
                                # -1 when the group has no committed offset for the partition.
                                Field("committed_offset", INT64),
                                Field("committed_leader_epoch", INT32, versions=(5, None), default=-1),
                                Field("metadata", STRING, nullable=True),
                                Field("error_code", INT16),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field("error_code", INT16, versions=(2, None), default=0),
    ],
)
