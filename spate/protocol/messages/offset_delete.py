"""OffsetDelete (API key 47): remove a group's committed offsets for some partitions.

Only offsets of topics the group is not consuming may go: a partition of a
subscribed topic answers GROUP_SUBSCRIBED_TO_TOPIC.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

OffsetDeleteRequest = message(
    "OffsetDeleteRequest",
    api_key=ApiKey.OFFSET_DELETE,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        Field("group_id", STRING),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetDeleteRequestTopic",
                    Field("name", STRING),
                    Field("partitions", Array(Struct("OffsetDeleteRequestPartition", Field("partition_index", INT32)))),
                )
            ),
        ),
    ],
)

OffsetDeleteResponse = message(
    "OffsetDeleteResponse",
    api_key=ApiKey.OFFSET_DELETE,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        # The group-level error; per-partition errors are below.
        Field("error_code", INT16),
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetDeleteResponseTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OffsetDeleteResponsePartition",
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
