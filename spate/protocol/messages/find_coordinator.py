"""FindCoordinator (API key 10): which broker coordinates a group or transaction.

Flexible from v3; from v4 one request asks for several keys of one type
(KIP-699) and each is answered in its own entry. v5 tells the broker the
client handles TRANSACTION_ABORTABLE (KIP-890); v6 allows share-group keys.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, STRING

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
KEY_TYPE_SHARE = 2
BATCHED_KEYS_FROM_VERSION = 4

FindCoordinatorRequest = message(
    "FindCoordinatorRequest",
    api_key=ApiKey.FIND_COORDINATOR,
    versions=(0, 6),
    flexible_from=3,
    fields=[
        Field("key", STRING, versions=(0, 3), default=""),
        Field("key_type", INT8, versions=(1, None), default=KEY_TYPE_GROUP),
        Field("coordinator_keys", Array(STRING), versions=(4, None)),
    ],
)

FindCoordinatorResponse = message(
    "FindCoordinatorResponse",
    api_key=ApiKey.FIND_COORDINATOR,
    versions=(0, 6),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16, versions=(0, 3), default=0),
        Field("error_message", STRING, versions=(1, 3), nullable=True, default=None),
        Field("node_id", INT32, versions=(0, 3), default=-1),
        Field("host", STRING, versions=(0, 3), default=""),
        Field("port", INT32, versions=(0, 3), default=-1),
        Field(
            "coordinators",
            Array(
                Struct(
                    "Coordinator",
                    Field("key", STRING),
                    Field("node_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                )
            ),
            versions=(4, None),
        ),
    ],
)
