"""CreatePartitions (API key 37): grow a topic's partition count."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, STRING

CreatePartitionsRequest = message(
    "CreatePartitionsRequest",
    api_key=ApiKey.CREATE_PARTITIONS,
    versions=(0, 3),
    flexible_from=2,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "CreatePartitionsTopic",
                    Field("name", STRING),
                    # The new total, not the number to add.
                    Field("count", INT32),
                    # null lets the controller place the new partitions.
                    Field(
                        "assignments",
                        Array(Struct("CreatePartitionsAssignment", Field("broker_ids", Array(INT32)))),
                        nullable=True,
                        default=None,
                    ),
                )
            ),
        ),
        Field("timeout_ms", INT32),
        Field("validate_only", BOOLEAN),
    ],
)

CreatePartitionsResponse = message(
    "CreatePartitionsResponse",
    api_key=ApiKey.CREATE_PARTITIONS,
    versions=(0, 3),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Struct(
                    "CreatePartitionsTopicResult",
                    Field("name", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                )
            ),
        ),
    ],
)
