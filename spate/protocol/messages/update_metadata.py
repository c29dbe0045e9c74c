"""UpdateMetadata (API key 6): the controller pushes live brokers and partition states to every broker.

Sent by the controller only; each broker serves its Metadata replies from
what it last received. v0 carries one host and port per broker, v1 a list of
endpoints (v3 names their listener), v2 the rack, v4 offline replicas; v5
groups partitions by topic and adds the broker epoch; v6 is the first
flexible version; v7 adds topic ids. Both partition layouts share one
partition state class (``topic_name`` is only on the wire in v0-v4).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT16, INT32, INT64, STRING, UUID, ZERO_UUID

_PartitionState = Struct(
    "UpdateMetadataPartitionState",
    Field("topic_name", STRING, versions=(0, 4), default=""),
    Field("partition_index", INT32),
    Field("controller_epoch", INT32),
    Field("leader", INT32),
    Field("leader_epoch", INT32),
    Field("isr", Array(INT32)),
    Field("zk_version", INT32),
    Field("replicas", Array(INT32)),
    Field("offline_replicas", Array(INT32), versions=(4, None)),
    versions=(0, None),
)

UpdateMetadataRequest = message(
    "UpdateMetadataRequest",
    api_key=ApiKey.UPDATE_METADATA,
    versions=(0, 7),
    flexible_from=6,
    fields=[
        Field("controller_id", INT32),
        Field("controller_epoch", INT32),
        Field("broker_epoch", INT64, versions=(5, None), default=-1),
        Field("ungrouped_partition_states", Array(_PartitionState), versions=(0, 4)),
        Field(
            "topic_states",
            Array(
                Struct(
                    "UpdateMetadataTopicState",
                    Field("topic_name", STRING),
                    Field("topic_id", UUID, versions=(7, None), default=ZERO_UUID),
                    Field("partition_states", Array(_PartitionState)),
                )
            ),
            versions=(5, None),
        ),
        Field(
            "live_brokers",
            Array(
                Struct(
                    "UpdateMetadataBroker",
                    Field("id", INT32),
                    # v0 only: one plaintext endpoint per broker.
                    Field("v0_host", STRING, versions=(0, 0), default=""),
                    Field("v0_port", INT32, versions=(0, 0), default=0),
                    Field(
                        "endpoints",
                        Array(
                            Struct(
                                "UpdateMetadataEndpoint",
                                Field("port", INT32),
                                Field("host", STRING),
                                Field("listener", STRING, versions=(3, None), default=""),
                                Field("security_protocol", INT16),
                            )
                        ),
                        versions=(1, None),
                    ),
                    # Kafka's generated default is ""; null reads as "no rack" here, as in Metadata.
                    Field("rack", STRING, versions=(2, None), nullable=True, default=None),
                )
            ),
        ),
    ],
)

UpdateMetadataResponse = message(
    "UpdateMetadataResponse",
    api_key=ApiKey.UPDATE_METADATA,
    versions=(0, 7),
    flexible_from=6,
    fields=[Field("error_code", INT16)],
)
