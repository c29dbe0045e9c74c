"""ConsumerGroupDescribe (API key 69): the state of consumer groups (KIP-848), member by member.

The next-generation counterpart of DescribeGroups: group and assignment
epochs, the assignor, and each member's subscription, current assignment and
target assignment. A group that is not a consumer group answers
GROUP_ID_NOT_FOUND. Version 0 (Kafka 3.9) is flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, STRING, UUID

ConsumerGroupDescribeRequest = message(
    "ConsumerGroupDescribeRequest",
    api_key=ApiKey.CONSUMER_GROUP_DESCRIBE,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("group_ids", Array(STRING)),
        Field("include_authorized_operations", BOOLEAN),
    ],
)

_TOPIC_PARTITIONS = Struct(
    "TopicPartitions",
    Field("topic_id", UUID),
    Field("topic_name", STRING),
    Field("partitions", Array(INT32)),
)
_ASSIGNMENT = Struct("Assignment", Field("topic_partitions", Array(_TOPIC_PARTITIONS)))

ConsumerGroupDescribeResponse = message(
    "ConsumerGroupDescribeResponse",
    api_key=ApiKey.CONSUMER_GROUP_DESCRIBE,
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "groups",
            Array(
                Struct(
                    "DescribedGroup",
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                    Field("group_id", STRING),
                    Field("group_state", STRING),
                    Field("group_epoch", INT32),
                    Field("assignment_epoch", INT32),
                    Field("assignor_name", STRING),
                    Field(
                        "members",
                        Array(
                            Struct(
                                "Member",
                                Field("member_id", STRING),
                                Field("instance_id", STRING, nullable=True, default=None),
                                Field("rack_id", STRING, nullable=True, default=None),
                                Field("member_epoch", INT32),
                                Field("client_id", STRING),
                                Field("client_host", STRING),
                                Field("subscribed_topic_names", Array(STRING)),
                                Field("subscribed_topic_regex", STRING, nullable=True, default=None),
                                Field("assignment", _ASSIGNMENT),
                                Field("target_assignment", _ASSIGNMENT),
                            )
                        ),
                    ),
                    Field("authorized_operations", INT32, default=-2147483648),
                )
            ),
        ),
    ],
)
