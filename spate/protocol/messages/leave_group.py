"""LeaveGroup (API key 13): members leave a group; from v3 several at once."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING

LeaveGroupRequest = message(
    "LeaveGroupRequest",
    api_key=ApiKey.LEAVE_GROUP,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("group_id", STRING),
        Field("member_id", STRING, versions=(0, 2), default=""),
        Field(
            "members",
            Array(
                Struct(
                    "MemberIdentity",
                    Field("member_id", STRING),
                    Field("group_instance_id", STRING, nullable=True, default=None),
                    # v5+: why the member leaves, for the broker's log.
                    Field("reason", STRING, versions=(5, None), nullable=True, default=None),
                )
            ),
            versions=(3, None),
        ),
    ],
)

LeaveGroupResponse = message(
    "LeaveGroupResponse",
    api_key=ApiKey.LEAVE_GROUP,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16),
        Field(
            "members",
            Array(
                Struct(
                    "MemberResponse",
                    Field("member_id", STRING),
                    Field("group_instance_id", STRING, nullable=True, default=None),
                    Field("error_code", INT16),
                )
            ),
            versions=(3, None),
        ),
    ],
)
