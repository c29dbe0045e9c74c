"""DeleteGroups (API key 42): remove empty consumer groups and their offsets."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

DeleteGroupsRequest = message(
    "DeleteGroupsRequest",
    api_key=ApiKey.DELETE_GROUPS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("groups_names", Array(STRING)),
    ],
)

DeleteGroupsResponse = message(
    "DeleteGroupsResponse",
    api_key=ApiKey.DELETE_GROUPS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Struct(
                    "DeletableGroupResult",
                    Field("group_id", STRING),
                    Field("error_code", INT16),
                )
            ),
        ),
    ],
)
