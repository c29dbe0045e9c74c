"""DescribeLogDirs (API key 35): a broker's log directories and the size of each partition in them.

A null topic list asks for every partition. v1 and v2 change nothing on
the wire (v2 is flexible); v3 adds a top-level error code and v4 each
directory's total and usable bytes (KIP-827).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

DescribeLogDirsRequest = message(
    "DescribeLogDirsRequest",
    api_key=ApiKey.DESCRIBE_LOG_DIRS,
    versions=(0, 4),
    flexible_from=2,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "DescribableLogDirTopic",
                    Field("topic", STRING),
                    Field("partitions", Array(INT32)),
                )
            ),
            nullable=True,
        ),
    ],
)

DescribeLogDirsResponse = message(
    "DescribeLogDirsResponse",
    api_key=ApiKey.DESCRIBE_LOG_DIRS,
    versions=(0, 4),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, versions=(3, None), default=0),
        Field(
            "results",
            Array(
                Struct(
                    "DescribeLogDirsResult",
                    Field("error_code", INT16),
                    Field("log_dir", STRING),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "DescribeLogDirsTopic",
                                Field("name", STRING),
                                Field(
                                    "partitions",
                                    Array(
                                        Struct(
                                            "DescribeLogDirsPartition",
                                            Field("partition_index", INT32),
                                            Field("partition_size", INT64),
                                            Field("offset_lag", INT64),
                                            Field("is_future_key", BOOLEAN),
                                        )
                                    ),
                                ),
                            )
                        ),
                    ),
                    Field("total_bytes", INT64, versions=(4, None), default=-1),
                    Field("usable_bytes", INT64, versions=(4, None), default=-1),
                )
            ),
        ),
    ],
)
