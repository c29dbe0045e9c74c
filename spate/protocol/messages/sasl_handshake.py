"""SaslHandshake (API key 17): choose a SASL mechanism.

Declared ahead of the security work; not in the advertised table yet.
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
