"""DescribeGroups (API key 15): state, protocol and members of groups."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, BYTES, INT16, INT32, STRING

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)

DescribeGroupsRequest = message(
    "DescribeGroupsRequest",
    api_key=ApiKey.DESCRIBE_GROUPS,
    versions=(0, 5),
    flexible_from=5,
    fields=[
        Field("groups", Array(STRING)),
        Field("include_authorized_operations", BOOLEAN, versions=(3, None), default=False),
    ],
)

DescribeGroupsResponse = message(
    "DescribeGroupsResponse",
    api_key=ApiKey.DESCRIBE_GROUPS,
    versions=(0, 5),
    flexible_from=5,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field(
            "groups",
            Array(
                Struct(
                    "DescribedGroup",
                    Field("error_code", INT16),
                    Field("group_id", STRING),
                    Field("group_state", STRING),
                    Field("protocol_type", STRING),
                    Field("protocol_data", STRING),
                    Field(
                        "members",
                        Array(
                            Struct(
                                "DescribedGroupMember",
                                Field("member_id", STRING),
                                Field("group_instance_id", STRING, versions=(4, None), nullable=True, default=None),
                                Field("client_id", STRING),
                                Field("client_host", STRING),
                                Field("member_metadata", BYTES),
                                Field("member_assignment", BYTES),
                            )
                        ),
                    ),
                    Field(
                        "authorized_operations",
                        INT32,
                        versions=(3, None),
                        default=AUTHORIZED_OPERATIONS_OMITTED,
                    ),
                )
            ),
        ),
    ],
)
