"""CreateTopics (API key 19).

Flexible from v5, which also answers each created topic's partition count,
replication factor and configs (KIP-525); v6 only adds the
THROTTLING_QUOTA_EXCEEDED error; v7 answers the topic id.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, STRING, UUID, ZERO_UUID

CreateTopicsRequest = message(
    "CreateTopicsRequest",
    api_key=ApiKey.CREATE_TOPICS,
    versions=(0, 7),
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
    versions=(0, 7),
    flexible_from=5,
    fields=[
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "CreatableTopicResult",
                    Field("name", STRING),
                    Field("topic_id", UUID, versions=(7, None), default=ZERO_UUID),
                    Field("error_code", INT16),
                    Field("error_message", STRING, versions=(1, None), nullable=True, default=None),
                    Field("topic_config_error_code", INT16, versions=(5, None), default=0, tag=0),
                    # v5+: what the topic was created with (KIP-525).
                    Field("num_partitions", INT32, versions=(5, None), default=-1),
                    Field("replication_factor", INT16, versions=(5, None), default=-1),
                    Field(
                        "configs",
                        Array(
                            Struct(
                                "CreatableTopicConfigs",
                                Field("name", STRING),
                                Field("value", STRING, nullable=True),
                                Field("read_only", BOOLEAN),
                                Field("config_source", INT8, default=-1),
                                Field("is_sensitive", BOOLEAN),
                            )
                        ),
                        versions=(5, None),
                        nullable=True,
                    ),
                )
            ),
        ),
    ],
)
