"""The ``__consumer_offsets`` records of consumer groups (KIP-848), as Kafka 3.9 writes them.

The key's version names the record (keys are not flexible; every value is
flexible, version 0)::

    key version 3  ConsumerGroupMetadataKey                group          -> epoch
    key version 5  ConsumerGroupMemberMetadataKey          group, member  -> subscription, client, timeouts
    key version 6  ConsumerGroupTargetAssignmentMetadataKey group         -> assignment epoch
    key version 7  ConsumerGroupTargetAssignmentMemberKey  group, member  -> target partitions
    key version 8  ConsumerGroupCurrentMemberAssignmentKey group, member  -> epochs, state, partitions

A null value is a tombstone (the member or group is gone). Partitions are
named by topic id. Version 4 (the subscribed topics' metadata) is not
written: the coordinator rereads partition counts from the cluster.
"""

from __future__ import annotations

from spate.protocol.data_schema import data_message
from spate.protocol.declarations import Array, Field, Struct
from spate.protocol.types import INT8, INT32, STRING, UUID


def _key(name: str, version: int, *, member: bool) -> type:
    fields = [Field("group_id", STRING)] + ([Field("member_id", STRING)] if member else [])
    return data_message(name, versions=(version, version), flexible_from=None, fields=fields)


def _topic_partitions(name: str) -> Array:
    return Array(Struct(name, Field("topic_id", UUID), Field("partitions", Array(INT32))))


ConsumerGroupMetadataKey = _key("ConsumerGroupMetadataKey", 3, member=False)
ConsumerGroupMemberMetadataKey = _key("ConsumerGroupMemberMetadataKey", 5, member=True)
ConsumerGroupTargetAssignmentMetadataKey = _key("ConsumerGroupTargetAssignmentMetadataKey", 6, member=False)
ConsumerGroupTargetAssignmentMemberKey = _key("ConsumerGroupTargetAssignmentMemberKey", 7, member=True)
ConsumerGroupCurrentMemberAssignmentKey = _key("ConsumerGroupCurrentMemberAssignmentKey", 8, member=True)

ConsumerGroupMetadataValue = data_message(
    "ConsumerGroupMetadataValue", versions=(0, 0), flexible_from=0, fields=[Field("epoch", INT32)],
)

ConsumerGroupMemberMetadataValue = data_message(
    "ConsumerGroupMemberMetadataValue",
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("instance_id", STRING, nullable=True, default=None),
        Field("rack_id", STRING, nullable=True, default=None),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", Array(STRING)),
        Field("subscribed_topic_regex", STRING, nullable=True, default=None),
        Field("server_assignor", STRING, nullable=True, default=None),
        Field("rebalance_timeout_ms", INT32, default=-1),
    ],
)

ConsumerGroupTargetAssignmentMetadataValue = data_message(
    "ConsumerGroupTargetAssignmentMetadataValue", versions=(0, 0), flexible_from=0,
    fields=[Field("assignment_epoch", INT32)],
)

ConsumerGroupTargetAssignmentMemberValue = data_message(
    "ConsumerGroupTargetAssignmentMemberValue", versions=(0, 0), flexible_from=0,
    fields=[Field("topic_partitions", _topic_partitions("TopicPartition"))],
)

_ASSIGNED = _topic_partitions("TopicPartitions")

ConsumerGroupCurrentMemberAssignmentValue = data_message(
    "ConsumerGroupCurrentMemberAssignmentValue",
    versions=(0, 0),
    flexible_from=0,
    fields=[
        Field("member_epoch", INT32),
        Field("previous_member_epoch", INT32),
        Field("state", INT8),
        Field("assigned_partitions", _ASSIGNED),
        Field("partitions_pending_revocation", _ASSIGNED),
    ],
)

# Key version -> (key class, value class).
CONSUMER_GROUP_RECORDS = {
    3: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    5: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    6: (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    7: (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    8: (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
}
