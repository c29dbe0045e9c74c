"""AlterClientQuotas (API key 49): set or remove quotas of user / client-id entities.

Version 1 is flexible. Each entry names one entity (its components; a null
name is the type's default) and the operations on its quota keys: a value
to set, or ``remove``. ``validate_only`` checks without applying.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, FLOAT64, INT16, INT32, STRING

_ENTITY = Array(Struct("EntityData", Field("entity_type", STRING),
                       Field("entity_name", STRING, nullable=True, default=None)))

AlterClientQuotasRequest = message(
    "AlterClientQuotasRequest",
    api_key=ApiKey.ALTER_CLIENT_QUOTAS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field(
            "entries",
            Array(
                Struct(
                    "EntryData",
                    Field("entity", _ENTITY),
                    Field("ops", Array(Struct("OpData", Field("key", STRING), Field("value", FLOAT64),
                                              Field("remove", BOOLEAN)))),
                )
            ),
        ),
        Field("validate_only", BOOLEAN, default=False),
    ],
)

AlterClientQuotasResponse = message(
    "AlterClientQuotasResponse",
    api_key=ApiKey.ALTER_CLIENT_QUOTAS,
    versions=(0, 1),
    flexible_from=1,
    fields=[
        Field("throttle_time_ms", INT32),
        Field(
            "entries",
            Array(
                Struct(
                    "EntryData",
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=True, default=None),
                    Field("entity", _ENTITY),
                )
            ),
        ),
    ],
)
