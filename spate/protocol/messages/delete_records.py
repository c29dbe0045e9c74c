"""DeleteRecords (API key 21): move partitions' log start offsets forward."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

DeleteRecordsRequest = message(
    "DeleteRecordsRequest",
    api_key=ApiKey.DELETE_RECORDS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "DeleteRecordsTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "DeleteRecordsPartition",
                                Field("partition_index", INT32),
                                # -1 means "up to the high watermark".
                                Field("offset", INT64),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field("timeout_ms", INT32),
    ],
)

DeleteRecordsResponse = message(
    "DeleteRecordsResponse",
    api_key=ApiKey.DELETE_RECORDS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "DeleteRecordsTopicResult",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "DeleteRecordsPartitionResult",
                                Field("partition_index", INT32),
                                Field("low_watermark", INT64),
                                Field("error_code", INT16),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
