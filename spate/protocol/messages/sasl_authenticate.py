"""SaslAuthenticate (API key 36): SASL tokens wrapped in Kafka frames (KIP-152).

v1 adds ``session_lifetime_ms`` (KIP-368 re-authentication); v2 is flexible.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Field, message
from spate.protocol.types import BYTES, INT16, INT64, STRING

SaslAuthenticateRequest = message(
    "SaslAuthenticateRequest",
    api_key=ApiKey.SASL_AUTHENTICATE,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("auth_bytes", BYTES),
    ],
)

SaslAuthenticateResponse = message(
    "SaslAuthenticateResponse",
    api_key=ApiKey.SASL_AUTHENTICATE,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, versions=(1, None), default=0),
    ],
)
