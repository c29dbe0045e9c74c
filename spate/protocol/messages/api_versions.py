"""ApiVersions (API key 18): which API versions the broker speaks.

Clients send it first, at the highest version they know. Version 3 is
flexible (compact strings, tagged fields) and names the client software; v4
is v3 again (it only lets a broker report a feature whose lowest version is
0). A request above the advertised range gets a v0-format reply with
UNSUPPORTED_VERSION and the full list, after which clients retry at the
highest version in that list.
"""

from __future__ import annotations

from typing import Any, Mapping

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import BOOLEAN, INT16, INT32, INT64, STRING
from spate.protocol.versions import VersionRange

ApiVersionsRequest = message(
    "ApiVersionsRequest",
    api_key=ApiKey.API_VERSIONS,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("client_software_name", STRING, versions=(3, None), default=""),
        Field("client_software_version", STRING, versions=(3, None), default=""),
    ],
)

ApiVersionsResponse = message(
    "ApiVersionsResponse",
    api_key=ApiKey.API_VERSIONS,
    versions=(0, 4),
    flexible_from=3,
    fields=[
        Field("error_code", INT16),
        Field(
            "api_keys",
            Array(
                Struct(
                    "ApiVersion",
                    Field("api_key", INT16),
                    Field("min_version", INT16),
                    Field("max_version", INT16),
                )
            ),
        ),
        Field("throttle_time_ms", INT32, versions=(1, None), default=0),
        Field(
            "supported_features",
            Array(
                Struct(
                    "SupportedFeatureKey",
                    Field("name", STRING),
                    Field("min_version", INT16),
                    Field("max_version", INT16),
                )
            ),
            versions=(3, None),
            tag=0,
        ),
        Field("finalized_features_epoch", INT64, versions=(3, None), tag=1, default=-1),
        Field(
            "finalized_features",
            Array(
                Struct(
                    "FinalizedFeatureKey",
                    Field("name", STRING),
                    Field("max_version_level", INT16),
                    Field("min_version_level", INT16),
                )
            ),
            versions=(3, None),
            tag=2,
        ),
        Field("zk_migration_ready", BOOLEAN, versions=(3, None), tag=3, default=False),
    ],
)


def api_versions_response(
    table: Mapping[ApiKey, VersionRange], error_code: ErrorCode = ErrorCode.NONE, throttle_time_ms: int = 0
) -> Any:
    """An ApiVersionsResponse listing ``table`` in API key order."""
    return ApiVersionsResponse(
        error_code=int(error_code),
        api_keys=[
            ApiVersionsResponse.ApiVersion(int(key), span.min, span.max)
            for key, span in sorted(table.items())
        ],
        throttle_time_ms=throttle_time_ms,
    )
