"""LeaderAndIsr (API key 4): the controller tells a broker which partitions it leads or follows.

Sent by the controller only. v0-v1 list every partition with its topic name;
from v2 partitions are grouped by topic, and both layouts share one partition
state class (``topic_name`` is only on the wire in v0-v1). v4 is the first
flexible version; v5 adds topic ids, ``type`` (full or incremental) and moves
the response's partition errors under topic ids.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, INT64, STRING, UUID, ZERO_UUID

# Values of LeaderAndIsrRequest.type (v5+).
TYPE_UNKNOWN = 0
TYPE_INCREMENTAL = 1
TYPE_FULL = 2

_PartitionState = Struct(
    "LeaderAndIsrPartitionState",
    Field("topic_name", STRING, versions=(0, 1), default=""),
    Field("partition_index", INT32),
    Field("controller_epoch", INT32),
    Field("leader", INT32),
    Field("leader_epoch", INT32),
    Field("isr", Array(INT32)),
    # The partition's znode version under ZooKeeper.
    Field("partition_epoch", INT32),
    Field("replicas", Array(INT32)),
    Field("adding_replicas", Array(INT32), versions=(3, None)),
    Field("removing_replicas", Array(INT32), versions=(3, None)),
    Field("is_new", BOOLEAN, versions=(1, None), default=False),
    versions=(0, None),
)

LeaderAndIsrRequest = message(
    "LeaderAndIsrRequest",
    api_key=ApiKey.LEADER_AND_ISR,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("controller_id", INT32),
        Field("controller_epoch", INT32),
        Field("broker_epoch", INT64, versions=(2, None), default=-1),
        Field("type", INT8, versions=(5, None), default=TYPE_UNKNOWN),
        Field("ungrouped_partition_states", Array(_PartitionState), versions=(0, 1)),
        Field(
            "topic_states",
            Array(
                Struct(
                    "LeaderAndIsrTopicState",
                    Field("topic_name", STRING),
                    Field("topic_id", UUID, versions=(5, None), default=ZERO_UUID),
                    Field("partition_states", Array(_PartitionState)),
                )
            ),
            versions=(2, None),
        ),
        Field(
            "live_leaders",
            Array(
                Struct(
                    "LeaderAndIsrLiveLeader",
                    Field("broker_id", INT32),
                    Field("host_name", STRING),
                    Field("port", INT32),
                )
            ),
        ),
    ],
)

_PartitionError = Struct(
    "LeaderAndIsrPartitionError",
    Field("topic_name", STRING, versions=(0, 4), default=""),
    Field("partition_index", INT32),
    Field("error_code", INT16),
    versions=(0, None),
)

LeaderAndIsrResponse = message(
    "LeaderAndIsrResponse",
    api_key=ApiKey.LEADER_AND_ISR,
    versions=(0, 5),
    flexible_from=4,
    fields=[
        Field("error_code", INT16),
        Field("partition_errors", Array(_PartitionError), versions=(0, 4)),
        Field(
            "topics",
            Array(
                Struct(
                    "LeaderAndIsrTopicError",
                    Field("topic_id", UUID),
                    Field("partition_errors", Array(_PartitionError)),
                )
            ),
            versions=(5, None),
        ),
    ],
)
