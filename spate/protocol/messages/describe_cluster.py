"""DescribeCluster (API key 60): the cluster id, the controller and the live brokers.

What admin clients ask instead of Metadata. Every version is flexible; v1
adds ``endpoint_type`` (1 brokers, 2 controllers), which a ZooKeeper-mode
broker answers only for brokers.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, STRING

ENDPOINT_TYPE_BROKERS = 1
ENDPOINT_TYPE_CONTROLLERS = 2

DescribeClusterRequest = message(
    "DescribeClusterRequest",
    api_key=ApiKey.DESCRIBE_CLUSTER,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("include_cluster_authorized_operations", BOOLEAN),
        Field("endpoint_type", INT8, versions=(1, None), default=ENDPOINT_TYPE_BROKERS),
    ],
)

DescribeClusterResponse = message(
    "DescribeClusterResponse",
    api_key=ApiKey.DESCRIBE_CLUSTER,
    versions=(0, 1),
    flexible_from=0,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field("endpoint_type", INT8, versions=(1, None), default=ENDPOINT_TYPE_BROKERS),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field(
            "brokers",
            Array(
                Struct(
                    "DescribeClusterBroker",
                    Field("broker_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("rack", STRING, nullable=True, default=None),
                )
            ),
        ),
        Field("cluster_authorized_operations", INT32, default=AUTHORIZED_OPERATIONS_OMITTED),
    ],
)
