"""Metadata (API key 3): brokers, topics, partitions, leaders and replicas.

In v0 an empty topic list means "all topics"; from v1 that is a null list and
an empty one means "none". Flexible from v9; v10 adds topic ids, v11 drops
the cluster's authorized operations (DescribeCluster has them), v12 lets a
topic be asked for by id alone.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, STRING, UUID, ZERO_UUID

# Sent when authorized operations were not requested.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)

MetadataRequest = message(
    "MetadataRequest",
    api_key=ApiKey.METADATA,
    versions=(0, 12),
    flexible_from=9,
    fields=[
        Field(
            "topics",
            Array(
                Struct(
                    "MetadataRequestTopic",
                    # v10+: a topic may be asked for by id, its name then null.
                    Field("topic_id", UUID, versions=(10, None), default=ZERO_UUID),
                    Field("name", STRING, nullable=(10, None)),
                )
            ),
            nullable=(1, None),
        ),
        Field("allow_auto_topic_creation", BOOLEAN, versions=(4, None), default=True),
        Field("include_cluster_authorized_operations", BOOLEAN, versions=(8, 10), default=False),
        Field("include_topic_authorized_operations", BOOLEAN, versions=(8, None), default=False),
    ],
)

MetadataResponse = message(
    "MetadataResponse",
    api_key=ApiKey.METADATA,
    versions=(0, 12),
    flexible_from=9,
    fields=[
        Field("throttle_time_ms", INT32, versions=(3, None), default=0),
        Field(
            "brokers",
            Array(
                Struct(
                    "MetadataResponseBroker",
                    Field("node_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("rack", STRING, versions=(1, None), nullable=True, default=None),
                )
            ),
        ),
        Field("cluster_id", STRING, versions=(2, None), nullable=True, default=None),
        Field("controller_id", INT32, versions=(1, None), default=-1),
        Field(
            "topics",
            Array(
                Struct(
                    "MetadataResponseTopic",
                    Field("error_code", INT16),
                    # v12+: null for a topic asked for by an id the broker does not know.
                    Field("name", STRING, nullable=(12, None)),
                    Field("topic_id", UUID, versions=(10, None), default=ZERO_UUID),
                    Field("is_internal", BOOLEAN, versions=(1, None), default=False),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                "MetadataResponsePartition",
                                Field("error_code", INT16),
                                Field("partition_index", INT32),
                                Field("leader_id", INT32),
                                Field("leader_epoch", INT32, versions=(7, None), default=-1),
                                Field("replica_nodes", Array(INT32)),
                                Field("isr_nodes", Array(INT32)),
                                Field("offline_replicas", Array(INT32), versions=(5, None)),
                            )
                        ),
                    ),
                    Field(
                        "topic_authorized_operations",
                        INT32,
                        versions=(8, None),
                        default=AUTHORIZED_OPERATIONS_OMITTED,
                    ),
                )
            ),
        ),
        Field(
            "cluster_authorized_operations",
            INT32,
            versions=(8, 10),
            default=AUTHORIZED_OPERATIONS_OMITTED,
        ),
    ],
)
