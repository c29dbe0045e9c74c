"""DeleteTopics (API key 20)."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

DeleteTopicsRequest = message(
    "DeleteTopicsRequest",
    api_key=ApiKey.DELETE_TOPICS,
    versions=(0, 3),
    flexible_from=4,
    fields=[
        Field("topic_names", Array(STRING)),
        Field("timeout_ms", INT32),
    ],
)

DeleteTopicsResponse = message(
    "DeleteTopicsResponse",
    api_key=ApiKey.DELETE_TOPICS,
    versions=(0, 3),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field(
            "responses",
            Array(
                Struct(
                    "DeletableTopicResult",
                    Field("name", STRING),
                    Field("error_code", INT16),
                )
            ),
        ),
    ],
)
