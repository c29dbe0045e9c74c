"""ConsumerGroupHeartbeat (API key 68): a member of a consumer group (KIP-848) joins, stays, reconciles, leaves.

The one request of the next-generation protocol: the member sends its
subscription and the partitions it owns, the coordinator answers with the
member's epoch and, when it changed, the partitions the member may own now.
Fields left null mean "unchanged since my last heartbeat". Member epoch 0
joins, -1 leaves, -2 leaves a static member that will come back. Every
version is flexible. Version 0 is Kafka 3.9's; version 1 (Kafka 4.0) adds a
subscription by regular expression and lets the member choose its own id,
and is the version librdkafka 2.10+ requires.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, STRING, UUID

ConsumerGroupHeartbeatRequest = message(
    "ConsumerGroupHeartbeatRequest",
    api_key=ApiKey.CONSUMER_GROUP_HEARTBEAT,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("group_id", STRING),
        Field("member_id", STRING),
        Field("member_epoch", INT32),
        Field("instance_id", STRING, nullable=True, default=None),
        Field("rack_id", STRING, nullable=True, default=None),
        Field("rebalance_timeout_ms", INT32, default=-1),
        Field("subscribed_topic_names", Array(STRING), nullable=True, default=None),
        Field("subscribed_topic_regex", STRING, versions=(1, None), nullable=True, default=None),
        Field("server_assignor", STRING, nullable=True, default=None),
        Field(
            "topic_partitions",
            Array(Struct("TopicPartitions", Field("topic_id", UUID), Field("partitions", Array(INT32)))),
            nullable=True,
            default=None,
        ),
    ],
)

ConsumerGroupHeartbeatResponse = message(
    "ConsumerGroupHeartbeatResponse",
    api_key=ApiKey.CONSUMER_GROUP_HEARTBEAT,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field("member_id", STRING, nullable=True, default=None),
        Field("member_epoch", INT32),
        Field("heartbeat_interval_ms", INT32),
        Field(
            "assignment",
            Struct(
                "Assignment",
                Field(
                    "topic_partitions",
                    Array(Struct("TopicPartitions", Field("topic_id", UUID), Field("partitions", Array(INT32)))),
                ),
            ),
            nullable=True,
            default=None,
        ),
    ],
)
