"""ElectLeaders (API key 43): an admin asks the controller to elect partition leaders.

A null ``topic_partitions`` means every partition. v0 always elects the
preferred replica; v1 adds ``election_type`` and a top-level error code in
the response; v2 is the first flexible version.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, STRING

# Values of ElectLeadersRequest.election_type (v1+).
ELECTION_PREFERRED = 0
ELECTION_UNCLEAN = 1

ElectLeadersRequest = message(
    "ElectLeadersRequest",
    api_key=ApiKey.ELECT_LEADERS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("election_type", INT8, versions=(1, None), default=ELECTION_PREFERRED),
        Field(
            "topic_partitions",
            Array(
                Struct(
                    "TopicPartitions",
                    Field("topic", STRING),
                    Field("partitions", Array(INT32)),
                )
            ),
            nullable=True,
        ),
        Field("timeout_ms", INT32, default=60000),
    ],
)

ElectLeadersResponse = message(
    "ElectLeadersResponse",
    api_key=ApiKey.ELECT_LEADERS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, versions=(1, None), default=0),
        Field(
            "replica_election_results",
            Array(
                Struct(
                    "ReplicaElectionResult",
                    Field("topic", STRING),
                    Field(
                        "partition_result",
                        Array(
                            Struct(
                                "PartitionResult",
                                Field("partition_id", INT32),
                                Field("error_code", INT16),
                                Field("error_message", STRING, nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
