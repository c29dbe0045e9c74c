"""AlterConfigs (API key 33): replace a resource's whole set of dynamic configs."""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, STRING

AlterConfigsRequest = message(
    "AlterConfigsRequest",
    api_key=ApiKey.ALTER_CONFIGS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field(
            "resources",
            Array(
                Struct(
                    "AlterConfigsResource",
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                    Field(
                        "configs",
                        Array(
                            Struct(
                                "AlterableConfig",
                                Field("name", STRING),
                                Field("value", STRING, nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
        Field("validate_only", BOOLEAN),
    ],
)

AlterConfigsResponse = message(
    "AlterConfigsResponse",
    api_key=ApiKey.ALTER_CONFIGS,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "responses",
            Array(
                Struct(
                    "AlterConfigsResourceResponse",
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                )
            ),
        ),
    ],
)
