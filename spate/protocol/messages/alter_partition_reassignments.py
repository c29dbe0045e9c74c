"""AlterPartitionReassignments (API key 45): start or cancel moving partitions to other replicas.

A partition's ``replicas`` null cancels its pending reassignment. v0 is
flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

AlterPartitionReassignmentsRequest = message(
    "AlterPartitionReassignmentsRequest",
    api_key=ApiKey.ALTER_PARTITION_REASSIGNMENTS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("timeout_ms", INT32, default=60000),
        Field(
            "topics",
            Array(
                Struct(
                    "ReassignableTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ReassignablePartition",
                                Field("partition_index", INT32),
                                Field("replicas", Array(INT32), nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

AlterPartitionReassignmentsResponse = message(
    "AlterPartitionReassignmentsResponse",
    api_key=ApiKey.ALTER_PARTITION_REASSIGNMENTS,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field(
            "responses",
            Array(
                Struct(
                    "ReassignableTopicResponse",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ReassignablePartitionResponse",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
