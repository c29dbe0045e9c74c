"""SaslHandshake (API key 17): choose a SASL mechanism.

v0 is followed by raw SASL tokens in bare size-prefixed frames; v1 by
SaslAuthenticate requests (KIP-152).
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, message
from spate.protocol.types import INT16, STRING

SaslHandshakeRequest = message(
    "SaslHandshakeRequest",
    api_key=ApiKey.SASL_HANDSHAKE,
    versions=(0, 1),
    flexible_from=None,
    fields=[
        Field("mechanism", STRING),
    ],
)

SaslHandshakeResponse = message(
    "SaslHandshakeResponse",
    api_key=ApiKey.SASL_HANDSHAKE,
    versions=(0, 1),
    flexible_from=None,
    fields=[
        Field("error_code", INT16),
        Field("mechanisms", Array(STRING)),
    ],
)
