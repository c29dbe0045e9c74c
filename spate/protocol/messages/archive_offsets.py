"""ArchiveOffsets (Spate API key 1001): how far a topic's Delta archive reaches, told to the brokers.

Kafka defines no such request; Spate serves it on a key far above Kafka's
range, beside CleanPlan (1000). An archive job (``jobs/archive.py``) asks
each partition's leader (``archived_offset`` -1: describe only) where its
log starts, its high watermark and last stable offset, how far the archive
is known to reach and ``archive_target_offset``: where retention would move
the log start were nothing held back for the archive (at most the last
stable offset). Once every record below an offset is in the Delta table, the
job sends that offset to every replica of the partition; a replica records
it (it never goes back) and from then on retention may delete segments
below it. ``is_leader`` tells which answer speaks for the partition.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING

DESCRIBE_ONLY = -1
NO_OFFSET = -1

ArchiveOffsetsRequest = message(
    "ArchiveOffsetsRequest",
    api_key=ApiKey.SPATE_ARCHIVE_OFFSETS,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "ArchiveOffsetsTopic",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ArchiveOffsetsPartition",
                                Field("partition_index", INT32),
                                Field("archived_offset", INT64),  # -1: describe only
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)

ArchiveOffsetsResponse = message(
    "ArchiveOffsetsResponse",
    api_key=ApiKey.SPATE_ARCHIVE_OFFSETS,
    versions=(0, 0),
    flexible_from=None,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "topics",
            Array(
                Struct(
                    "ArchiveOffsetsTopicResult",
                    Field("name", STRING),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "ArchiveOffsetsPartitionResult",
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable=True, default=None),
                                Field("is_leader", BOOLEAN),
                                Field("log_start_offset", INT64),
                                Field("high_watermark", INT64),
                                Field("last_stable_offset", INT64),
                                Field("archived_offset", INT64),  # -1: never reported to this replica
                                Field("archive_target_offset", INT64),
                                Field("archive_path", STRING, nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
