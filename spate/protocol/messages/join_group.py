"""JoinGroup (API key 11): the first half of a classic group rebalance.

From v4 a member that joins with an empty member id gets MEMBER_ID_REQUIRED
and its assigned id, and must join again with it. Flexible from v6; v7
names the protocol type in the reply, v8 adds the member's reason for
joining and v9 the KIP-848 ``skip_assignment`` flag.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, BYTES, INT16, INT32, STRING

JoinGroupRequest = message(
    "JoinGroupRequest",
    api_key=ApiKey.JOIN_GROUP,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("group_id", STRING),
        Field("session_timeout_ms", INT32),
        # v0 clients have no separate rebalance timeout; the session timeout serves.
        Field("rebalance_timeout_ms", INT32, versions=(1, None), default=-1),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, versions=(5, None), nullable=True, default=None),
        Field("protocol_type", STRING),
        Field(
            "protocols",
            Array(
                Struct(
                    "JoinGroupRequestProtocol",
                    Field("name", STRING),
                    Field("metadata", BYTES),
                )
            ),
        ),
        # v8+: why the member (re)joins, for the broker's log.
        Field("reason", STRING, versions=(8, None), nullable=True, default=None),
    ],
)

JoinGroupResponse = message(
    "JoinGroupResponse",
    api_key=ApiKey.JOIN_GROUP,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("throttle_time_ms", INT32, versions=(2, None), default=0),
        Field("error_code", INT16),
        Field("generation_id", INT32, default=-1),
        Field("protocol_type", STRING, versions=(7, None), nullable=True, default=None),
        Field("protocol_name", STRING, nullable=(7, None)),
        Field("leader", STRING),
        # v9+ (KIP-848's server-side assignment); always false for a classic group.
        Field("skip_assignment", BOOLEAN, versions=(9, None), default=False),
        Field("member_id", STRING),
        Field(
            "members",
            Array(
                Struct(
                    "JoinGroupResponseMember",
                    Field("member_id", STRING),
                    Field("group_instance_id", STRING, versions=(5, None), nullable=True, default=None),
                    Field("metadata", BYTES),
                )
            ),
        ),
    ],
)
