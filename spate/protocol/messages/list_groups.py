"""ListGroups (API key 16): every group a broker coordinates."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

ListGroupsRequest = message(
    "ListGroupsRequest",
    api_key=ApiKey.LIST_GROUPS,
    versions=(0, 5),
    flexible_from=3,
    fields=[
        # v4+: only groups in these states (Kafka's names, e.g. Stable); empty: every state.
        Field("states_filter", Array(STRING), versions=(4, None)),
        # v5+: only groups of these types (classic, consumer); empty: every type.
        Field("types_filter", Array(STRING), versions=(5, None)),
    ],
)

ListGroupsResponse = message(
    "ListGroupsResponse",
    api_key=ApiKey.LIST_GROUPS,
    versions=(0, 5),
    flexible_from=3,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16),
        Field(
            "groups",
            Array(
                Struct(
                    "ListedGroup",
                    Field("group_id", STRING),
                    Field("protocol_type", STRING),
                    Field("group_state", STRING, versions=(4, None), default=""),
                    Field("group_type", STRING, versions=(5, None), default=""),
                )
            ),
        ),
    ],
)
