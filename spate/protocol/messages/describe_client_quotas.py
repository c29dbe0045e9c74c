"""DescribeClientQuotas (API key 48): the quotas configured for the entities matching a filter.

Version 1 is flexible. Each component filters one entity type: match type 0
names an entity (``match``), 1 the type's default, 2 any entity of the type
(including the default). ``strict`` matches only entities with exactly the
filtered types. Entity names are null for the default.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, FLOAT64, INT8, INT16, INT32, STRING

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2

DescribeClientQuotasRequest = message(
    "DescribeClientQuotasRequest",
    api_key=ApiKey.DESCRIBE_CLIENT_QUOTAS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field("components", Array(Struct("ComponentData", Field("entity_type", STRING), Field("match_type", INT8),
                                         Field("match", STRING, nullable=True, default=None)))),
        Field("strict", BOOLEAN, default=False),
    ],
)

DescribeClientQuotasResponse = message(
    "DescribeClientQuotasResponse",
    api_key=ApiKey.DESCRIBE_CLIENT_QUOTAS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field(
            "entries",
            Array(
                Struct(
                    "EntryData",
                    Field("entity", Array(Struct("EntityData", Field("entity_type", STRING),
                                                 Field("entity_name", STRING, nullable=True, default=None)))),
                    Field("values", Array(Struct("ValueData", Field("key", STRING), Field("value", FLOAT64)))),
                )
            ),
            nullable=True,
            default=None,
        ),
    ],
)
