"""FindCoordinator (API key 10): which broker coordinates a group or transaction."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import INT8, INT16, INT32, STRING

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1

FindCoordinatorRequest = message(
    "FindCoordinatorRequest",
    api_key=ApiKey.FIND_COORDINATOR,
    versions=(0, 2),
    flexible_from=3,
    fields=[
        Field("key", STRING),
        Field("key_type", INT8, versions=(1, None), default=KEY_TYPE_GROUP),
    ],
)

FindCoordinatorResponse = message(
    "FindCoordinatorResponse",
    api_key=ApiKey.FIND_COORDINATOR,
    versions=(0, 2),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16),
        Field("error_message", STRING, versions=(1, None), nullable=True, default=None),
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
    ],
)
