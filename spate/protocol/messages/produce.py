"""Produce (API key 0): append record batches to partitions.

v0-2 carry legacy message sets (magic 0 up to v1, magic 1 at v2), which the
broker converts to RecordBatch v2; v1 adds the throttle time, v2 the log
append time, v3 the transactional id and RecordBatch v2 itself.
Flexible from v9; v10 adds the KIP-951 leader hints as tagged fields, and v11
only tells the broker the client handles TRANSACTION_ABORTABLE (KIP-890).

Records stay raw bytes (a memoryview into the request frame) so that the
broker can validate and stamp batch headers without copying them.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, RECORDS, STRING

ProduceRequest = message(
    "ProduceRequest",
    api_key=ApiKey.PRODUCE,
    versions=(0, 11),
    flexible_from=9,
    fields=[
        Field("transactional_id", STRING, versions=(3, None), nullable=True, default=None),
        # 0: no response at all, 1: leader only, -1: all in-sync replicas.
        Field("acks", INT16),
        Field("timeout_ms", INT32),
        Field(
            "topic_data",
            Array(
                Struct(
                    "TopicProduceData",
                    Field("name", STRING),
                    Field(
                        "partition_data",
                        Array(
                            Struct(
                                "PartitionProduceData",
                                Field("index", INT32),
                                Field("records", RECORDS, nullable=True),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

ProduceResponse = message(
    "ProduceResponse",
    api_key=ApiKey.PRODUCE,
    versions=(0, 11),
    flexible_from=9,
    fields=[
        Field(
            "responses",
            Array(
                Struct(
                    "TopicProduceResponse",
                    Field("name", STRING),
                    Field(
                        "partition_responses",
                        Array(
                            Struct(
                                "PartitionProduceResponse",
                                Field("index", INT32),
                                Field("error_code", INT16),
                                Field("base_offset", INT64),
                                # -1 unless the topic uses LogAppendTime.
                                Field("log_append_time_ms", INT64, versions=(2, None), default=-1),
                                Field("log_start_offset", INT64, versions=(5, None), default=-1),
                                # v8+: which records of the batch made it fail (INVALID_RECORD), and why.
                                Field(
                                    "record_errors",
                                    Array(
                                        Struct(
                                            "BatchIndexAndErrorMessage",
                                            Field("batch_index", INT32),
                                            Field("batch_index_error_message", STRING, nullable=True, default=None),
                                        )
                                    ),
                                    versions=(8, None),
                                ),
                                Field("error_message", STRING, versions=(8, None), nullable=True, default=None),
                                # v10+ (KIP-951): the new leader, sent with NOT_LEADER_OR_FOLLOWER.
                                Field(
                                    "current_leader",
                                    Struct(
                                        "LeaderIdAndEpoch",
                                        Field("leader_id", INT32, default=-1),
                                        Field("leader_epoch", INT32, default=-1),
                                    ),
                                    versions=(10, None),
                                    tag=0,
                                ),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        # v10+ (KIP-951): endpoints of the leaders named in current_leader.
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
            versions=(10, None),
            tag=0,
        ),
    ],
)
