"""CreateTopics (API key 19)."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, STRING

CreateTopicsRequest = message(
    "CreateTopicsRequest",
    api_key=ApiKey.CREATE_TOPICS,
    versions=(0, 4),
    flexible_from=5,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "CreatableTopic",
                    Field("name", STRING),
                    # -1 (with replication_factor -1) asks for the broker defaults.
                    Field("num_partitions", INT32),
                    Field("replication_factor", INT16),
                    Field(
                        "assignments",
                        Array(
                            Struct(
                                "CreatableReplicaAssignment",
                                Field("partition_index", INT32),
                                Field("broker_ids", Array(INT32)),
                            )
                        ),
                    ),
                    Field(
                        "configs",
                        Array(
                            Struct(
                                "CreatableTopicConfig",
                                Field("name", STRING),
                                Field("value", STRING, nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOLEAN, versions=(1, None), default=False),
    ],
)

CreateTopicsResponse = message(
    "CreateTopicsResponse",
    api_key=ApiKey.CREATE_TOPICS,
    versions=(0, 4),
    flexible_from=5,
    fields=[
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "CreatableTopicResult",
                    Field("name", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, versions=(1, None), nullable=True, default=None),
                )
            ),
        ),
    ],
)
