"""IncrementalAlterConfigs (API key 44): set, delete, append to or subtract from single config keys.

Unlike AlterConfigs, keys not named keep their values. v1 is the first
flexible version.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, STRING

# Values of AlterableConfig.config_operation.
OP_SET = 0
OP_DELETE = 1
OP_APPEND = 2
OP_SUBTRACT = 3

IncrementalAlterConfigsRequest = message(
    "IncrementalAlterConfigsRequest",
    api_key=ApiKey.INCREMENTAL_ALTER_CONFIGS,
    versions=(0, 1),
    flexible_from=1,
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
                                Field("config_operation", INT8),
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

IncrementalAlterConfigsResponse = message(
    "IncrementalAlterConfigsResponse",
    api_key=ApiKey.INCREMENTAL_ALTER_CONFIGS,
    versions=(0, 1),
    flexible_from=1,
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
