"""SaslHandshake: choose a SASL mechanism.

On a SASL listener the connection answers it itself (the state is the
connection's, see :mod:`broker_core.server.sasl_gate`); :func:`handle` is what
any other listener answers, as Kafka does: ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from typing import Any

from broker_core.security.sasl.authenticator import SaslServerAuthenticator
from broker_core.server.context import BrokerContext
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateResponse
from spate.protocol.messages.sasl_handshake import SaslHandshakeResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    return SaslHandshakeResponse(error_code=int(ErrorCode.ILLEGAL_SASL_STATE), mechanisms=[])


def illegal_state(request: Request, message: str) -> Any:
    """The answer to a SaslHandshake or SaslAuthenticate the connection's SASL state does not allow."""
    if request.api_key == ApiKey.SASL_HANDSHAKE:
        return SaslHandshakeResponse(error_code=int(ErrorCode.ILLEGAL_SASL_STATE), mechanisms=[])
    return SaslAuthenticateResponse(error_code=int(ErrorCode.ILLEGAL_SASL_STATE), error_message=message,
                                    auth_bytes=b"", session_lifetime_ms=0)


def answer(authenticator: SaslServerAuthenticator, request: Request) -> Any:
    """Raises :class:`~broker_core.security.sasl.authenticator.IllegalSaslStateError` mid-exchange."""
    error, mechanisms = authenticator.handshake(request.body.mechanism, request.api_version)
    return SaslHandshakeResponse(error_code=int(error), mechanisms=list(mechanisms))
