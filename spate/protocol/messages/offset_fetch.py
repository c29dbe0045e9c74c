"""OffsetFetch (API key 9): read a group's committed positions.

v0 reads what Kafka kept in ZooKeeper for OffsetCommit v0; Spate keeps every
commit in its coordinator, so v0 answers like v1. From v2 a null topic list asks for every partition the group has committed.
v7 adds ``require_stable`` (KIP-447): partitions with a pending
transactional offset commit answer UNSTABLE_OFFSET_COMMIT until it is
decided. Flexible from v6; from v8 one request asks for several groups
(KIP-709) and every field lives inside the per-group entries; v9 adds the
member id and epoch of a KIP-848 consumer.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

BATCHED_GROUPS_FROM_VERSION = 8

OffsetFetchRequest = message(
    "OffsetFetchRequest",
    api_key=ApiKey.OFFSET_FETCH,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("group_id", STRING, versions=(0, 7), default=""),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetFetchRequestTopic",
                    Field("name", STRING),
                    Field("partition_indexes", Array(INT32)),
                )
            ),
            versions=(0, 7),
            nullable=(2, 7),
        ),
        Field(
            "groups",
            Array(
                Struct(
                    "OffsetFetchRequestGroup",
                    Field("group_id", STRING),
                    Field("member_id", STRING, versions=(9, None), nullable=True, default=None),
                    Field("member_epoch", INT32, versions=(9, None), default=-1),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "OffsetFetchRequestTopics",
                                Field("name", STRING),
                                Field("partition_indexes", Array(INT32)),
                            )
                        ),
                        nullable=True,
                    ),
                )
            ),
            versions=(8, None),
        ),
        Field("require_stable", BOOLEAN, versions=(7, None), default=False),
    ],
)



def _partition_fields(leader_epoch_from: int) -> tuple[Field, ...]:
    return (
        Field("partition_index", INT32),
        # -1 when the group has no committed offset for the partition.
        Field("committed_offset", INT64),
        Field("committed_leader_epoch", INT32, versions=(leader_epoch_from, None), default=-1),
        Field("metadata", STRING, nullable=True),
        Field("error_code", INT16),
    )


OffsetFetchResponse = message(
    "OffsetFetchResponse",
    api_key=ApiKey.OFFSET_FETCH,
    versions=(0, 9),
    flexible_from=6,
    fields=[
        Field("throttle_time_ms", INT32, versions=(3, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetFetchResponseTopic",
                    Field("name", STRING),
                    Field("partitions", Array(Struct("OffsetFetchResponsePartition", *_partition_fields(5)))),
                )
            ),
            versions=(0, 7),
        ),
        Field("error_code", INT16, versions=(2, 7), default=0),
        Field(
            "groups",
            Array(
                Struct(
                    "OffsetFetchResponseGroup",
                    Field("group_id", STRING),
                    Field(
                        "topics",
                        Array(
                            Struct(
                                "OffsetFetchResponseTopics",
                                Field("name", STRING),
                                Field(
                                    "partitions",
                                    Array(Struct("OffsetFetchResponsePartitions", *_partition_fields(8))),
                                ),
                            )
                        ),
                    ),
                    Field("error_code", INT16, default=0),
                )
            ),
            versions=(8, None),
        ),
    ],
)
