"""StopReplica (API key 5): the controller tells a broker to stop replicating partitions.

Sent by the controller only. v0 lists partitions with their topic names and
one ``delete_partitions`` flag for all of them; v1 groups them by topic and
adds the broker epoch; v2 is the first flexible version; v3 replaces the
single flag with a per-partition delete flag and leader epoch (a stale epoch
is answered with FENCED_LEADER_EPOCH).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

StopReplicaRequest = message(
    "StopReplicaRequest",
    api_key=ApiKey.STOP_REPLICA,
    versions=(0, 3),
    flexible_from=2,
    fields=[
        Field("controller_id", INT32),
        Field("controller_epoch", INT32),
        Field("broker_epoch", INT64, versions=(1, None), default=-1),
        Field("delete_partitions", BOOLEAN, versions=(0, 2), default=False),
        Field(
            "ungrouped_partitions",
            Array(
                Struct(
                    "StopReplicaPartitionV0",
                    Field("topic_name", STRING),
                    Field("partition_index", INT32),
                )
            ),
            versions=(0, 0),
        ),
        Field(
            "topics",
            Array(
                Struct(
                    "StopReplicaTopicV1",
                    Field("name", STRING),
                    Field("partition_indexes", Array(INT32)),
                )
            ),
            versions=(1, 2),
        ),
        Field(
            "topic_states",
            Array(
                Struct(
                    "StopReplicaTopicState",
                    Field("topic_name", STRING),
                    Field(
                        "partition_states",
                        Array(
                            Struct(
                                "StopReplicaPartitionState",
                                Field("partition_index", INT32),
                                Field("leader_epoch", INT32, default=-1),
                                Field("delete_partition", BOOLEAN),
                            )
                        ),
                    ),
                )
            ),
            versions=(3, None),
        ),
    ],
)

StopReplicaResponse = message(
    "StopReplicaResponse",
    api_key=ApiKey.STOP_REPLICA,
    versions=(0, 3),
    flexible_from=2,
    fields=[
        Field("error_code", INT16),
        Field(
            "partition_errors",
            Array(
                Struct(
                    "StopReplicaPartitionError",
                    Field("topic_name", STRING),
                    Field("partition_index", INT32),
                    Field("error_code", INT16),
                )
            ),
        ),
    ],
)
