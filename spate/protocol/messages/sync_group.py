"""SyncGroup (API key 14): the leader hands out assignments; members receive theirs."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BYTES, INT16, INT32, STRING

SyncGroupRequest = message(
    "SyncGroupRequest",
    api_key=ApiKey.SYNC_GROUP,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, versions=(3, None), nullable=True, default=None),
        # v5+: the member's view of the group's protocol; the coordinator refuses a mismatch.
        Field("protocol_type", STRING, versions=(5, None), nullable=True, default=None),
        Field("protocol_name", STRING, versions=(5, None), nullable=True, default=None),
        # Empty except from the group leader.
        Field(
            "assignments",
            Array(
                Struct(
                    "SyncGroupRequestAssignment",
                    Field("member_id", STRING),
                    Field("assignment", BYTES),
                )
            ),
        ),
    ],
)

SyncGroupResponse = message(
    "SyncGroupResponse",
    api_key=ApiKey.SYNC_GROUP,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16),
        # v5+: the group's protocol, so the member can check the assignment's format.
        Field("protocol_type", STRING, versions=(5, None), nullable=True, default=None),
        Field("protocol_name", STRING, versions=(5, None), nullable=True, default=None),
        Field("assignment", BYTES),
    ],
)
