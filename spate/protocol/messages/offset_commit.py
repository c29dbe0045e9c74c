"""OffsetCommit (API key 8): a consumer group member stores its positions.

v0 commits without a group generation (Kafka stored these in ZooKeeper;
Spate's coordinator keeps them with every other commit, so OffsetFetch of
any version reads them); v1 adds the generation and member id, v2 the
retention time, v7 the static member id. Flexible from v8.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING

OffsetCommitRequest = message(
    "OffsetCommitRequest",
    api_key=ApiKey.OFFSET_COMMIT,
    versions=(0, 9),
    flexible_from=8,
    fields=[
        Field("group_id", STRING),
        # The group generation for the classic protocol; -1 for simple (groupless) commits.
        Field("generation_id_or_member_epoch", INT32, versions=(1, None), default=-1),
        Field("member_id", STRING, versions=(1, None), default=""),
        Field("group_instance_id", STRING, versions=(7, None), nullable=True, default=None),
        # -1 means "use the broker's offsets.retention.minutes".
        Field("retention_time_ms", INT64, versions=(2, 4), default=-1),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetCommitRequestTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OffsetCommitRequestPartition",
                                Field("partition_index", INT32),
                                Field("committed_offset", INT64),
                                Field("committed_leader_epoch", INT32, versions=(6, None), default=-1),
                                # v1 only: the client's commit time; the broker keeps its own, as from v2.
                                Field("commit_timestamp", INT64, versions=(1, 1), default=-1),
                                Field("committed_metadata", STRING, nullable=True),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

OffsetCommitResponse = message(
    "OffsetCommitResponse",
    api_key=ApiKey.OFFSET_COMMIT,
    versions=(0, 9),
    flexible_from=8,
    fields=[
        Field("throttle_time_ms", INT32, versions=(3, None), default=0),
        Field(
            "topics",
            Array(
                Struct(
                    "OffsetCommitResponseTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "OffsetCommitResponsePartition",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
