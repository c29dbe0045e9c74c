"""DeleteTopics (API key 20).

Flexible from v4; v5 adds an error message per topic and the
THROTTLING_QUOTA_EXCEEDED error; from v6 a topic is named by name or by id
(KIP-516), and each result carries both.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING, UUID, ZERO_UUID

TOPIC_IDS_FROM_VERSION = 6

DeleteTopicsRequest = message(
    "DeleteTopicsRequest",
    api_key=ApiKey.DELETE_TOPICS,
    versions=(0, 6),
    flexible_from=4,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "DeleteTopicState",
                    # Null when the topic is named by id.
                    Field("name", STRING, nullable=True, default=None),
                    Field("topic_id", UUID, default=ZERO_UUID),
                )
            ),
            versions=(6, None),
        ),
        Field("topic_names", Array(STRING), versions=(0, 5)),
        Field("timeout_ms", INT32),
    ],
)

DeleteTopicsResponse = message(
    "DeleteTopicsResponse",
    api_key=ApiKey.DELETE_TOPICS,
    versions=(0, 6),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field(
            "responses",
            Array(
                Struct(
                    "DeletableTopicResult",
                    Field("name", STRING, nullable=(6, None)),
                    Field("topic_id", UUID, versions=(6, None), default=ZERO_UUID),
                    Field("error_code", INT16),
                    Field("error_message", STRING, versions=(5, None), nullable=True, default=None),
                )
            ),
        ),
    ],
)
