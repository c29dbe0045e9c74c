"""ControlledShutdown (API key 7): a broker asks the controller to move leadership away before it stops.

The reply lists the partitions the broker still leads; it retries until that
list is empty or it gives up. v2 adds the broker epoch, v3 is the first
flexible version. Kafka sends v0 with a request header that has no client
id (header v0).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

ControlledShutdownRequest = message(
    "ControlledShutdownRequest",
    api_key=ApiKey.CONTROLLED_SHUTDOWN,
    versions=(0, 3),
    flexible_from=3,
    fields=[
        Field("broker_id", INT32),
        Field("broker_epoch", INT64, versions=(2, None), default=-1),
    ],
)

ControlledShutdownResponse = message(
    "ControlledShutdownResponse",
    api_key=ApiKey.CONTROLLED_SHUTDOWN,
    versions=(0, 3),
    flexible_from=3,
    fields=[
        Field("error_code", INT16),
        Field(
            "remaining_partitions",
            Array(
                Struct(
                    "RemainingPartition",
                    Field("topic_name", STRING),
                    Field("partition_index", INT32),
                )
            ),
        ),
    ],
)
