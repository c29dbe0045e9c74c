"""ListPartitionReassignments (API key 46): which partitions are being moved, and where to.

A null ``topics`` lists every ongoing reassignment. v0 is flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

ListPartitionReassignmentsRequest = message(
    "ListPartitionReassignmentsRequest",
    api_key=ApiKey.LIST_PARTITION_REASSIGNMENTS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "topics",
            Array(
                Struct(
                    "ListPartitionReassignmentsTopics",
                    Field("name", STRING),
                    Field("partition_indexes", Array(INT32)),
                )
            ),
            nullable=True,
            default=None,
        ),
    ],
)

ListPartitionReassignmentsResponse = message(
    "ListPartitionReassignmentsResponse",
    api_key=ApiKey.LIST_PARTITION_REASSIGNMENTS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field(
            "topics",
            Array(
                Struct(
                    "OngoingTopicReassignment",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OngoingPartitionReassignment",
                                Field("partition_index", INT32),
                                Field("replicas", Array(INT32)),
                                Field("adding_replicas", Array(INT32)),
                                Field("removing_replicas", Array(INT32)),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
