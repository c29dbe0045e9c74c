"""Fetch (API key 1): read record batches from partitions.

v0-3 read legacy message sets (magic 0 up to v1, magic 1 at v2-3), which the
broker converts from the RecordBatch v2 it stores; v3 adds the response's
``max_bytes``, v4 the isolation level, the last stable offset, aborted
transactions and RecordBatch v2.
Versions 7+ carry fetch-session fields (KIP-227): ``session_id`` and
``session_epoch`` (0 at 0 asks for a session, 0 at -1 for none), and the
partitions to drop as ``forgotten_topics_data``. Response
records may be a :class:`~spate.protocol.types.FileRangeRef` so that the
server can send log-segment bytes without copying them.

Flexible from v12, which also adds the fetcher's last fetched epoch and the
leader's diverging-epoch answer (KIP-320 for consumers); v13 names topics by
id instead of name; v15 moves a follower's id into ``replica_state``; v16
adds leader endpoints (KIP-951) and v17 a follower's directory id.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, ZERO_UUID

FetchRequest = message(
    "FetchRequest",
    api_key=ApiKey.FETCH,
    versions=(0, 17),
    flexible_from=12,
    fields=[
        Field("cluster_id", STRING, versions=(12, None), nullable=True, default=None, tag=0),
        # -1 for consumers; a broker id for replica fetchers (v15+: in replica_state).
        Field("replica_id", INT32, versions=(0, 14), default=-1),
        Field(
            "replica_state",
            Struct(
                "ReplicaState",
                Field("replica_id", INT32, default=-1),
                Field("replica_epoch", INT64, default=-1),
            ),
            versions=(15, None),
            tag=1,
        ),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, versions=(3, None), default=0x7FFFFFFF),
        # 0 read_uncommitted, 1 read_committed.
        Field("isolation_level", INT8, versions=(4, None), default=0),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field("session_epoch", INT32, versions=(7, None), default=-1),
        Field(
            "topics",
            Array(
                Struct(
                    "FetchTopic",
                    # v13+ names topics by id only.
                    Field("topic", STRING, versions=(0, 12), default=""),
                    Field("topic_id", UUID, versions=(13, None), default=ZERO_UUID),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "FetchPartition",
                                Field("partition", INT32),
                                Field("current_leader_epoch", INT32, versions=(9, None), default=-1),
                                Field("fetch_offset", INT64),
                                # v12+: the epoch of the last fetched batch, to detect a diverged log.
                                Field("last_fetched_epoch", INT32, versions=(12, None), default=-1),
                                Field("log_start_offset", INT64, versions=(5, None), default=-1),
                                Field("partition_max_bytes", INT32),
                                Field("replica_directory_id", UUID, versions=(17, None), default=ZERO_UUID, tag=0),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field(
            "forgotten_topics_data",
            Array(
                Struct(
                    "ForgottenTopic",
                    Field("topic", STRING, versions=(7, 12), default=""),
                    Field("topic_id", UUID, versions=(13, None), default=ZERO_UUID),
                    Field("partitions", Array(INT32)),
                )
            ),
            versions=(7, None),
        ),
        Field("rack_id", STRING, versions=(11, None), default=""),
    ],
)

FetchResponse = message(
    "FetchResponse",
    api_key=ApiKey.FETCH,
    versions=(0, 17),
    flexible_from=12,
    fields=[
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field("error_code", INT16, versions=(7, None), default=0),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field(
            "responses",
            Array(
                Struct(
                    "FetchableTopicResponse",
                    Field("topic", STRING, versions=(0, 12), default=""),
                    Field("topic_id", UUID, versions=(13, None), default=ZERO_UUID),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "PartitionData",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("high_watermark", INT64),
                                Field("last_stable_offset", INT64, versions=(4, None), default=-1),
                                Field("log_start_offset", INT64, versions=(5, None), default=-1),
                                # v12+: where the fetcher's log diverges from the leader's (KIP-320).
                                Field(
                                    "diverging_epoch",
                                    Struct(
                                        "EpochEndOffset",
                                        Field("epoch", INT32, default=-1),
                                        Field("end_offset", INT64, default=-1),
                                    ),
                                    versions=(12, None),
                                    tag=0,
                                ),
                                Field(
                                    "current_leader",
                                    Struct(
                                        "LeaderIdAndEpoch",
                                        Field("leader_id", INT32, default=-1),
                                        Field("leader_epoch", INT32, default=-1),
                                    ),
                                    versions=(12, None),
                                    tag=1,
                                ),
                                Field(
                                    "snapshot_id",
                                    Struct(
                                        "SnapshotId",
                                        Field("end_offset", INT64, default=-1),
                                        Field("epoch", INT32, default=-1),
                                    ),
                                    versions=(12, None),
                                    tag=2,
                                ),
                                # null or empty when no aborted transaction overlaps the data.
                                Field(
                                    "aborted_transactions",
                                    Array(
                                        Struct(
                                            "AbortedTransaction",
                                            Field("producer_id", INT64),
                                            Field("first_offset", INT64),
                                        )
                                    ),
                                    versions=(4, None),
                                    nullable=True,
                                    default=None,
                                ),
                                Field("preferred_read_replica", INT32, versions=(11, None), default=-1),
                                Field("records", RECORDS, nullable=True),
                            )
                        ),
                    ),
                )
            ),
        ),
        # v16+ (KIP-951): endpoints of the leaders named in current_leader.
        Field(
            "node_endpoints",
            Array(
                Struct(
                    "NodeEndpoint",
                    Field("node_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("rack", STRING, nullable=True, default=None),
                )
            ),
            versions=(16, None),
            tag=0,
        ),
    ],
)
