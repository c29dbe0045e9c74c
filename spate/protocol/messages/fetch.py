"""Fetch (API key 1): read record batches from partitions.

Versions 7+ carry fetch-session fields; Spate answers ``session_id`` 0 (no
session), which makes clients send full fetch requests every time. Response
records may be a :class:`~spate.protocol.types.FileRangeRef` so that the
server can send log-segment bytes without copying them.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, INT64, RECORDS, STRING

FetchRequest = message(
    "FetchRequest",
    api_key=ApiKey.FETCH,
    versions=(4, 11),
    flexible_from=12,
    fields=[
        # -1 for consumers; a broker id for replica fetchers.
        Field("replica_id", INT32, default=-1),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        # 0 read_uncommitted, 1 read_committed.
        Field("isolation_level", INT8, default=0),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field("session_epoch", INT32, versions=(7, None), default=-1),
        Field(
            "topics",
            Array(
                Struct(
                    "FetchTopic",
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "FetchPartition",
                                Field("partition", INT32),
                                Field("current_leader_epoch", INT32, versions=(9, None), default=-1),
                                Field("fetch_offset", INT64),
                                Field("log_start_offset", INT64, versions=(5, None), default=-1),
                                Field("partition_max_bytes", INT32),
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
                    Field("topic", STRING),
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
    versions=(4, 11),
    flexible_from=12,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, versions=(7, None), default=0),
        Field("session_id", INT32, versions=(7, None), default=0),
        Field(
            "responses",
            Array(
                Struct(
                    "FetchableTopicResponse",
                    Field("topic", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "PartitionData",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("high_watermark", INT64),
                                Field("last_stable_offset", INT64, default=-1),
                                Field("log_start_offset", INT64, versions=(5, None), default=-1),
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
                                    nullable=True,
                                ),
                                Field("preferred_read_replica", INT32, versions=(11, None), default=-1),
                                Field("records", RECORDS, nullable=True),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
