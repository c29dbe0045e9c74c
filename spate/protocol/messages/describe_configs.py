"""DescribeConfigs (API key 32): topic and broker configuration entries."""

from __future__ import annotations

import enum

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT8, INT16, INT32, STRING

RESOURCE_TYPE_TOPIC = 2
RESOURCE_TYPE_BROKER = 4


class ConfigSource(enum.IntEnum):
    """Kafka's ``ConfigSource`` ids as DescribeConfigs v1+ reports them."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6

DescribeConfigsRequest = message(
    "DescribeConfigsRequest",
    api_key=ApiKey.DESCRIBE_CONFIGS,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field(
            "resources",
            Array(
                Struct(
                    "DescribeConfigsResource",
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                    # null asks for every entry.
                    Field("configuration_keys", Array(STRING), nullable=True, default=None),
                )
            ),
        ),
        Field("include_synonyms", BOOLEAN, versions=(1, None), default=False),
        Field("include_documentation", BOOLEAN, versions=(3, None), default=False),
    ],
)

DescribeConfigsResponse = message(
    "DescribeConfigsResponse",
    api_key=ApiKey.DESCRIBE_CONFIGS,
    versions=(0, 4),
    flexible_from=4,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                Struct(
                    "DescribeConfigsResult",
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                    Field(
                        "configs",
                        Array(
                            Struct(
                                "DescribeConfigsResourceResult",
                                Field("name", STRING),
                                Field("value", STRING, nullable=True, default=None),
                                Field("read_only", BOOLEAN),
                                Field("is_default", BOOLEAN, versions=(0, 0), default=False),
                                Field("config_source", INT8, versions=(1, None), default=-1),
                                Field("is_sensitive", BOOLEAN),
                                Field(
                                    "synonyms",
                                    Array(
                                        Struct(
                                            "DescribeConfigsSynonym",
                                            Field("name", STRING),
                                            Field("value", STRING, nullable=True, default=None),
                                            Field("source", INT8),
                                        )
                                    ),
                                    versions=(1, None),
                                ),
                                # v3+: the value's type (CONFIG_TYPE_*) and, when asked for, its documentation.
                                Field("config_type", INT8, versions=(3, None), default=0),
                                Field("documentation", STRING, versions=(3, None), nullable=True, default=None),
                            )
                        ),
                    ),
                )
            ),
        ),
    ],
)
