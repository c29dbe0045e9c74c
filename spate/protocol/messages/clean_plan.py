"""CleanPlan (Spate API key 1000): compaction plans made outside the broker, and what they need to know.

Kafka defines no such request; Spate serves it on a key far above Kafka's
range. A compaction job (``jobs/compaction.py``) asks each partition's
leader where the partition's dirty range starts and ends (``chunk`` -1:
describe only) and then sends, for that range, the offset of every key's
latest record. Keys travel as 16-byte MD5 hashes, as in Kafka's offset map:
``entries`` packs ``(hash, int64 offset)`` pairs of 24 bytes, and a large
plan arrives in chunks numbered from 0 under one ``plan_id``; the chunk with
``last_chunk`` set makes the leader apply the plan and answer when it is
applied (or after ``timeout_ms``, with REQUEST_TIMED_OUT while it goes on).
Every answer describes the partition's log as it is then.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, BYTES, INT16, INT32, INT64, STRING

DESCRIBE_ONLY = -1
HASH_SIZE = 16
ENTRY_SIZE = HASH_SIZE + 8

CleanPlanRequest = message(
    "CleanPlanRequest",
    api_key=ApiKey.SPATE_CLEAN_PLAN,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        Field("timeout_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "CleanPlanTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "CleanPlanPartition",
                                Field("partition_index", INT32),
                                Field("current_leader_epoch", INT32),  # -1: not checked
                                Field("plan_id", STRING),
                                Field("chunk", INT32),  # -1: describe only
                                Field("last_chunk", BOOLEAN),
                                Field("dirty_start", INT64),
                                Field("dirty_end", INT64),
                                Field("entries", BYTES),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

CleanPlanResponse = message(
    "CleanPlanResponse",
    api_key=ApiKey.SPATE_CLEAN_PLAN,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "CleanPlanTopicResult",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "CleanPlanPartitionResult",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable=True, default=None),
                                Field("leader_epoch", INT32),
                                Field("log_start_offset", INT64),
                                Field("high_watermark", INT64),
                                Field("first_dirty_offset", INT64),
                                Field("clean_end_offset", INT64),  # a plan may reach up to here
                                Field("size_bytes", INT64),
                                Field("dirty_bytes", INT64),
                                Field("due", BOOLEAN),
                                Field("planner", STRING),
                                Field("chunks_received", INT32),
                                Field("records_read", INT64),
                                Field("records_kept", INT64),
                                Field("bytes_read", INT64),
                                Field("bytes_written", INT64),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
